// Goal (1): read_symbols() on a large library takes at most as long as
// `nm -S --defined-only` on the same file. Both are run interleaved, after
// one warm-up each (page cache hot for both), and the medians compared.
//
//   bench_symbols_extract [file] [reps]
//   default file: /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 (Debian libllvm14)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "symbols/symbols.hpp"

namespace {

using runner::bench::median;
using runner::bench::now_ms;

bool run_nm(const std::string& path, bool dynamic) {
  std::vector<std::string> argv = {"nm", "-S", "--defined-only", path};
  // A stripped library has no .symtab: plain nm then reads nothing ("no
  // symbols"), so -D makes it read .dynsym, the table read_symbols reads.
  if (dynamic) argv.insert(argv.begin() + 1, "-D");
  return runner::bench::run_quietly(argv).code == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path =
      argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
  int reps = argc > 2 ? std::atoi(argv[2]) : 9;
  runner::symbols::DebugSearch search;

  auto warm = runner::symbols::read_symbols(path, search);
  if (!warm) {
    std::fprintf(stderr, "read_symbols(%s): %s\n", path.c_str(),
                 warm.error().what().c_str());
    return 1;
  }
  if (!run_nm(path, false) || !run_nm(path, true)) {
    std::fprintf(stderr, "nm failed on %s\n", path.c_str());
    return 1;
  }
  std::vector<double> ours, nm, nm_dynamic;
  size_t count = 0;
  for (int i = 0; i < reps; ++i) {
    double t0 = now_ms();
    auto symbols = runner::symbols::read_symbols(path, search);
    double t1 = now_ms();
    if (!symbols) return 1;
    count = symbols->size();
    run_nm(path, false);
    double t2 = now_ms();
    run_nm(path, true);
    double t3 = now_ms();
    ours.push_back(t1 - t0);
    nm.push_back(t2 - t1);
    nm_dynamic.push_back(t3 - t2);
  }
  double a = median(ours), b = median(nm), c = median(nm_dynamic);
  std::printf("file: %s\nsymbols: %zu\nreps: %d\n", path.c_str(), count, reps);
  std::printf("read_symbols median: %.2f ms\n", a);
  std::printf("nm -S --defined-only median: %.2f ms\n", b);
  std::printf("nm -D -S --defined-only median: %.2f ms\n", c);
  std::printf("ratio read_symbols / nm: %.3f, / nm -D: %.3f (goal <= 1.0)\n",
              a / b, a / c);
  return 0;
}
