// build_artifacts: dedup by file identity, deterministic keys, per-pid load
// bias, artifacts on disk, per-file failures counted.
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "symbols/symbols.hpp"
#include "test_util.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::symbols {
namespace {

using testing::prog_nopie;
using testing::prog_pie;
using testing::run;
using testing::shell_quote;

constexpr uint64_t kPage = 4096;

using testing::mappings_for;

void append(std::vector<ModuleMapping>& out,
            const std::vector<ModuleMapping>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

std::string slurp(const std::string& path) {
  auto content = base::read_file(path);
  REQUIRE(content);
  return *content;
}

ArtifactOptions options_for(const std::string& out_dir, unsigned threads = 0,
                            bool debug_info = true) {
  ArtifactOptions options;
  options.out_dir = out_dir;
  options.threads = threads;
  options.debug_info = debug_info;
  return options;
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

std::vector<std::pair<std::string, std::string>> key_paths(
    const ArtifactSet& set) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ModuleInfo& m : set.modules) out.emplace_back(m.key, m.path);
  return out;
}

TEST_SUITE("symbols") {
  TEST_CASE("module key naming") {
    CHECK(make_module_key(0, "/usr/lib/x86_64-linux-gnu/libc.so.6") ==
          "0__libc.so.6");
    CHECK(make_module_key(5, "/tmp/jit-12345.so") == "5__jit-12345.so");
    CHECK(make_module_key(2, "bench") == "2__bench");
    CHECK(make_module_key(3, "/dir/") == "3__");
  }

  TEST_CASE("two pids mapping the same file share one key") {
    runner::testing::TempDir out;
    std::vector<ModuleMapping> mappings;
    append(mappings, mappings_for(prog_pie(), 100, 0x555555554000));
    append(mappings, mappings_for(prog_pie(), 200, 0x7f0000000000));
    append(mappings, mappings_for(prog_nopie(), 100, 0));
    auto set = build_artifacts(mappings, options_for(out.path()));
    REQUIRE(set);
    REQUIRE(set->modules.size() == 2);
    // Sorted by path: ".../symbols_prog_nopie" < ".../symbols_prog_pie".
    CHECK(set->modules[0].key == "0__symbols_prog_nopie");
    CHECK(set->modules[1].key == "1__symbols_prog_pie");
    CHECK(set->errors.empty());
    for (const ModuleInfo& m : set->modules) {
      CAPTURE(m.key);
      CHECK(m.has_symbols);
      CHECK(m.has_unwind);
      CHECK(m.has_debug_info);
      CHECK(exists(out.file(m.key + ".symbols.map")));
      CHECK(exists(out.file(m.key + ".unwind_data")));
      CHECK(set->debug_info.count(m.key) == 1);
      // Written content = what the lower-level functions return.
      auto parsed =
          format::parse_symbols_map(slurp(out.file(m.key + ".symbols.map")));
      REQUIRE(parsed);
      auto direct = read_symbols(m.path, ArtifactOptions{}.debug);
      REQUIRE(direct);
      CHECK(parsed->size() == direct->size());
      CHECK(m.symbol_count == direct->size());
      CHECK(m.symbols_min == direct->front().addr);
      std::string bytes = slurp(out.file(m.key + ".unwind_data"));
      auto decoded = format::decode_unwind_data(std::span<const uint8_t>(
          reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      REQUIRE(decoded);
      CHECK(decoded->path == m.path);
      CHECK(decoded->eh_frame == read_unwind_data(m.path, m.path)->eh_frame);
    }
    REQUIRE(set->by_pid.size() == 2);
    const auto& pid100 = set->by_pid.at(100);
    const auto& pid200 = set->by_pid.at(200);
    REQUIRE(pid100.size() == 2);
    REQUIRE(pid200.size() == 1);
    CHECK(pid100[0].key == "0__symbols_prog_nopie");
    CHECK(pid100[0].load_bias == 0);
    CHECK(pid100[0].base_avma == 0x400000);
    CHECK(pid100[1].key == "1__symbols_prog_pie");
    CHECK(pid100[1].load_bias == 0x555555554000);
    CHECK(pid100[1].base_avma == 0x555555554000);
    CHECK(pid200[0].key == "1__symbols_prog_pie");
    CHECK(pid200[0].load_bias == 0x7f0000000000);
    CHECK(pid200[0].has_symbols);
    CHECK(pid200[0].has_unwind);
    // avma_range is the (last) mapping's range.
    auto last = mappings_for(prog_pie(), 200, 0x7f0000000000).back();
    CHECK(pid200[0].avma_range == Range{last.start, last.end});
  }

  TEST_CASE("a pid mapping one file twice gets each mapping's load bias") {
    // As node maps itself: its text, and a remap of part of it elsewhere
    // (V8's embedded builtins), each with its own bias.
    runner::testing::TempDir out;
    std::vector<ModuleMapping> mappings =
        mappings_for(prog_pie(), 100, 0x555555554000);
    ModuleMapping remap = mappings.back();
    remap.start = 0x7f0000000000;
    remap.end = remap.start + kPage;
    mappings.push_back(remap);
    auto set = build_artifacts(mappings, options_for(out.path(), 1, false));
    REQUIRE(set);
    REQUIRE(set->modules.size() == 1);
    const auto& pid100 = set->by_pid.at(100);
    REQUIRE(pid100.size() == 2);
    CHECK(pid100[0].key == pid100[1].key);
    CHECK(pid100[0].load_bias == 0x555555554000);
    CHECK(pid100[0].avma_range.start == mappings.front().start);
    // The remap maps the same file offset as the text, 0x7f0000000000 on.
    const uint64_t text_start = mappings[mappings.size() - 2].start;
    CHECK(pid100[1].load_bias == 0x555555554000 + (remap.start - text_start));
    CHECK(pid100[1].avma_range == Range{remap.start, remap.end});
    CHECK(pid100[1].base_avma == pid100[1].load_bias);
  }

  TEST_CASE("keys do not depend on mapping order or thread count") {
    runner::testing::TempDir out1, out2;
    std::string libc, ld;
    std::vector<ModuleMapping> mappings;
    append(mappings, mappings_for(prog_pie(), 1, 0x555555554000));
    append(mappings, mappings_for(prog_nopie(), 2, 0));
    append(mappings, mappings_for(testing::prog_cpp(), 3, 0x555555554000));
    append(mappings, mappings_for(prog_pie(), 4, 0x565656560000));
    auto first = build_artifacts(mappings, options_for(out1.path(), 1));
    std::mt19937 rng(42);
    std::shuffle(mappings.begin(), mappings.end(), rng);
    auto second = build_artifacts(mappings, options_for(out2.path(), 4));
    REQUIRE(first);
    REQUIRE(second);
    CHECK(key_paths(*first) == key_paths(*second));
    REQUIRE(first->by_pid.size() == second->by_pid.size());
    for (const auto& [pid, modules] : first->by_pid) {
      const auto& other = second->by_pid.at(pid);
      REQUIRE(modules.size() == other.size());
      for (size_t i = 0; i < modules.size(); ++i) {
        CHECK(modules[i].key == other[i].key);
        CHECK(modules[i].load_bias == other[i].load_bias);
      }
    }
    for (const ModuleInfo& m : first->modules) {
      CHECK(slurp(out1.file(m.key + ".symbols.map")) ==
            slurp(out2.file(m.key + ".symbols.map")));
      CHECK(slurp(out1.file(m.key + ".unwind_data")) ==
            slurp(out2.file(m.key + ".unwind_data")));
    }
  }

  TEST_CASE(
      "same path with two identities gets two keys; unknown identity joins") {
    runner::testing::TempDir out;
    std::vector<ModuleMapping> a = mappings_for(prog_pie(), 1, 0x555555554000);
    std::vector<ModuleMapping> b = a;
    for (ModuleMapping& m : b) {
      m.pid = 2;
      m.inode += 1;  // same path, a different file (e.g. replaced on disk)
    }
    std::vector<ModuleMapping> c = a;
    for (ModuleMapping& m : c) {
      m.pid = 3;
      m.inode = 0;
      m.dev_major = m.dev_minor = 0;
    }
    std::vector<ModuleMapping> all;
    append(all, b);
    append(all, c);
    append(all, a);
    auto set = build_artifacts(all, options_for(out.path(), 0, false));
    REQUIRE(set);
    REQUIRE(set->modules.size() == 2);
    CHECK(set->modules[0].key == "0__symbols_prog_pie");
    CHECK(set->modules[1].key == "1__symbols_prog_pie");
    CHECK(set->by_pid.at(1).front().key == "0__symbols_prog_pie");
    CHECK(set->by_pid.at(2).front().key == "1__symbols_prog_pie");
    CHECK(set->by_pid.at(3).front().key == "0__symbols_prog_pie");
    CHECK(set->debug_info.empty());
    CHECK_FALSE(set->modules[0].has_debug_info);
  }

  TEST_CASE("bad files are counted and do not stop the others") {
    runner::testing::TempDir dir, out;
    std::string text = dir.file("notes.txt"), cut = dir.file("cut.so"),
                no_eh = dir.file("no_eh"), missing = dir.file("missing.so");
    REQUIRE(base::write_file_atomic(text, std::string_view("not an ELF\n")));
    std::string full = slurp(prog_pie());
    REQUIRE(
        base::write_file_atomic(cut, std::string_view(full).substr(0, 2000)));
    run("objcopy --remove-section=.eh_frame_hdr --remove-section=.eh_frame " +
        shell_quote(prog_pie()) + " " + shell_quote(no_eh));

    std::vector<ModuleMapping> mappings;
    auto fake = [&](const std::string& path, int32_t pid) {
      ModuleMapping m;
      m.pid = pid;
      m.path = path;
      m.start = 0x7f0000001000;
      m.end = 0x7f0000002000;
      m.pgoff = 0x1000;
      mappings.push_back(m);
    };
    fake(text, 10);
    fake(cut, 10);
    fake(missing, 10);
    append(mappings, mappings_for(no_eh, 10, 0x555555554000));
    append(mappings, mappings_for(prog_nopie(), 10, 0));
    // A mapping whose file range hits no PT_LOAD.
    ModuleMapping stray = mappings_for(prog_nopie(), 11, 0).front();
    stray.pgoff = 0x7fff0000;
    mappings.push_back(stray);

    auto set = build_artifacts(mappings, options_for(out.path(), 2));
    REQUIRE(set);
    CHECK(set->errors["not_elf"] == 1);
    CHECK(set->errors["truncated"] == 1);
    CHECK(set->errors["unreadable"] == 1);
    CHECK(set->errors["no_eh_frame"] == 1);
    CHECK(set->errors["no_load_segment"] == 1);
    CHECK(set->error_examples["not_elf"].rfind(text + ": ", 0) == 0);
    CHECK(set->error_examples["unreadable"].rfind(missing + ": ", 0) == 0);
    REQUIRE(set->modules.size() == 5);
    for (const ModuleInfo& m : set->modules) {
      CAPTURE(m.path);
      if (m.path == no_eh) {
        CHECK(m.has_symbols);
        CHECK_FALSE(m.has_unwind);
        CHECK(exists(out.file(m.key + ".symbols.map")));
        CHECK_FALSE(exists(out.file(m.key + ".unwind_data")));
      } else if (m.path == prog_nopie()) {
        CHECK(m.has_symbols);
        CHECK(m.has_unwind);
      } else {
        CHECK_FALSE(m.has_symbols);
        CHECK_FALSE(m.has_unwind);
        CHECK_FALSE(exists(out.file(m.key + ".symbols.map")));
      }
    }
    // pid 10 sees the two usable files; pid 11's only mapping had no segment.
    REQUIRE(set->by_pid.count(10) == 1);
    CHECK(set->by_pid.at(10).size() == 2);
    CHECK(set->by_pid.count(11) == 0);
  }

  TEST_CASE(
      "this process's real mappings: load bias equals the dynamic loader's") {
    // Executable file mappings from /proc/self/maps, as the agent would read
    // them, checked against dl_iterate_phdr's dlpi_addr for every object.
    std::vector<ModuleMapping> mappings;
    auto maps = runner::base::read_file("/proc/self/maps");
    REQUIRE(maps);
    for (const runner::format::ProcMapping& line :
         runner::format::parse_proc_maps(*maps))
      mappings.push_back(module_mapping(line, ::getpid()));
    REQUIRE(mappings.size() >= 3);
    runner::testing::TempDir out;
    auto set = build_artifacts(mappings, options_for(out.path()));
    REQUIRE(set);
    const auto& mine = set->by_pid.at(::getpid());

    struct Loaded {
      std::string path;
      uint64_t bias;
    };
    std::vector<Loaded> loaded;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
          if (name.empty()) name = "/proc/self/exe";
          if (name.find("linux-vdso") != std::string::npos) return 0;
          std::error_code ec;
          auto canonical = std::filesystem::canonical(name, ec);
          if (!ec) {
            static_cast<std::vector<Loaded>*>(data)->push_back(
                {canonical.string(), info->dlpi_addr});
          }
          return 0;
        },
        &loaded);
    size_t checked = 0;
    bool libc_seen = false, ld_seen = false;
    for (const Loaded& l : loaded) {
      for (const PidModule& pm : mine) {
        std::error_code ec;
        if (std::filesystem::canonical(pm.path, ec) != l.path) continue;
        CAPTURE(pm.path);
        CHECK(pm.load_bias == l.bias);
        CHECK(pm.has_symbols);
        CHECK(pm.has_unwind);
        ++checked;
        libc_seen |= pm.path.find("libc.so.6") != std::string::npos;
        ld_seen |= pm.path.find("ld-linux") != std::string::npos;
      }
    }
    CHECK(checked >= 3);
    CHECK(libc_seen);
    CHECK(ld_seen);
    // Deterministic: a second run over the same mappings gives the same keys.
    runner::testing::TempDir out2;
    auto again = build_artifacts(mappings, options_for(out2.path(), 0, false));
    REQUIRE(again);
    CHECK(key_paths(*set) == key_paths(*again));
  }

  TEST_CASE("unwritable output folder is an error") {
    runner::testing::TempDir dir;
    std::string file = dir.file("file");
    REQUIRE(base::write_file_atomic(file, std::string_view("x")));
    CHECK_FALSE(build_artifacts({}, options_for(file + "/sub")));
    auto empty = build_artifacts({}, options_for(dir.file("ok")));
    REQUIRE(empty);
    CHECK(empty->modules.empty());
  }
}

}  // namespace
}  // namespace runner::symbols
