// Goal (2): build_artifacts() on N pids (default 200) that map the same
// binaries costs at most 1.2x the single-pid run, because each unique file is
// parsed once. The mappings are this process's real executable mappings
// (/proc/self/maps: the bench binary, libc, libstdc++, libm, ld-linux, ...)
// plus those of any ELF files given on the command line, replicated per pid.
// One-pid and N-pid runs are interleaved; medians are compared.
//
//   bench_symbols_dedup [--pids N] [--reps R] [--no-debug-info] [extra.so ...]
#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/fs.hpp"
#include "bench/bench_util.hpp"
#include "format/format.hpp"
#include "symbols/symbols.hpp"

namespace {

using runner::bench::median;
using runner::bench::now_ms;
using runner::symbols::ModuleMapping;

// This process's executable file mappings, from /proc/self/maps.
std::vector<ModuleMapping> self_mappings() {
  std::vector<ModuleMapping> out;
  auto maps = runner::base::read_file("/proc/self/maps");
  if (!maps) return out;
  for (const runner::format::ProcMapping& line :
       runner::format::parse_proc_maps(*maps))
    out.push_back(runner::symbols::module_mapping(line, 0));
  return out;
}

// Mappings the kernel would make for an ELF file loaded at `base`.
bool file_mappings(const std::string& path, uint64_t base,
                   std::vector<ModuleMapping>& out) {
  auto summary = runner::symbols::read_elf_summary(path);
  struct stat st;
  if (!summary || ::stat(path.c_str(), &st) != 0) return false;
  for (const auto& seg : summary->loads) {
    if ((seg.flags & PF_X) == 0) continue;
    ModuleMapping m;
    m.path = path;
    m.start = base + (seg.vaddr & ~uint64_t{4095});
    m.end = base + ((seg.vaddr + seg.memsz + 4095) & ~uint64_t{4095});
    m.pgoff = seg.offset & ~uint64_t{4095};
    m.dev_major = major(st.st_dev);
    m.dev_minor = minor(st.st_dev);
    m.inode = st.st_ino;
    out.push_back(m);
  }
  return true;
}

std::vector<ModuleMapping> replicate(const std::vector<ModuleMapping>& base,
                                     int pids) {
  std::vector<ModuleMapping> out;
  out.reserve(base.size() * static_cast<size_t>(pids));
  for (int p = 0; p < pids; ++p) {
    for (ModuleMapping m : base) {
      m.pid = 1000 + p;
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int pids = 200, reps = 5;
  bool debug_info = true;
  std::vector<ModuleMapping> base = self_mappings();
  uint64_t extra_base = 0x7e0000000000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--pids") == 0 && i + 1 < argc) {
      pids = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--no-debug-info") == 0) {
      debug_info = false;
    } else if (!file_mappings(argv[i], extra_base, base)) {
      std::fprintf(stderr, "not a usable ELF file: %s\n", argv[i]);
      return 1;
    } else {
      extra_base += 0x100000000;
    }
  }
  std::vector<ModuleMapping> one = replicate(base, 1);
  std::vector<ModuleMapping> many = replicate(base, pids);

  char tmpl[] = "/tmp/runner-bench-symbols.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  std::string out_dir = tmpl;
  runner::symbols::ArtifactOptions options;
  options.out_dir = out_dir;
  options.debug_info = debug_info;

  size_t modules = 0;
  auto run = [&](const std::vector<ModuleMapping>& mappings) {
    double t0 = now_ms();
    auto set = runner::symbols::build_artifacts(mappings, options);
    double t1 = now_ms();
    if (!set) {
      std::fprintf(stderr, "build_artifacts: %s\n", set.error().what().c_str());
      std::exit(1);
    }
    modules = set->modules.size();
    return t1 - t0;
  };
  run(one);  // warm-up: page cache
  std::vector<double> t_one, t_many;
  for (int i = 0; i < reps; ++i) {
    t_one.push_back(run(one));
    t_many.push_back(run(many));
  }
  std::error_code ec;
  std::filesystem::remove_all(out_dir, ec);

  double a = median(t_one), b = median(t_many);
  std::printf(
      "unique files: %zu, mappings per pid: %zu, debug info: %s, reps: %d\n",
      modules, base.size(), debug_info ? "yes" : "no", reps);
  std::printf("1 pid median: %.2f ms\n", a);
  std::printf("%d pids median: %.2f ms\n", pids, b);
  std::printf("ratio %d pids / 1 pid: %.3f (goal <= 1.2)\n", pids, b / a);
  return 0;
}
