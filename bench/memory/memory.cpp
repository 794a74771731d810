// bench/memory: the runner's peak RSS when the benchmark forks many
// processes, side by side with `perf record -F 997 -k CLOCK_MONOTONIC
// --call-graph dwarf,8192` on the same workload.
//   memory RUNNER FORKER [COUNT...]        (default counts: 1000 4000)
// For each COUNT: `runner exec --warmup-time 0 --max-rounds 1 -- FORKER
// COUNT` and `perf record ... -- FORKER COUNT`, each measured as the peak
// RSS of the largest process of its tree (wait4's ru_maxrss: the runner or
// perf, the forks are tiny), and the runner/perf ratio. The runner finds
// exec-harness next to itself or through RUNNER_EXEC_HARNESS.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/fs.hpp"
#include "bench/bench_util.hpp"

using runner::bench::run_quietly;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: memory RUNNER FORKER [COUNT...]\n");
    return 2;
  }
  const std::string runner = argv[1], forker = argv[2];
  std::vector<std::string> counts;
  for (int i = 3; i < argc; ++i) counts.push_back(argv[i]);
  if (counts.empty()) counts = {"1000", "4000"};
  std::string tmpl = runner::base::temp_directory() + "/runner-mem.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string tmp = tmpl;

  std::printf(
      "bench/memory: peak RSS (MiB) of `runner exec` and of `perf "
      "record` on a command that forks+execs COUNT processes\n");
  std::printf("%8s %12s %10s %12s\n", "forks", "runner MiB", "perf MiB",
              "runner/perf");
  for (const std::string& count : counts) {
    auto r = run_quietly({runner, "exec", "--warmup-time", "0", "--max-rounds",
                          "1", "--profile-folder", tmp + "/profile",
                          "--fifo-dir", tmp, "--", forker, count});
    std::filesystem::remove_all(tmp + "/profile");
    auto p = run_quietly({"perf", "record", "-q", "-F", "997", "-k",
                          "CLOCK_MONOTONIC", "--call-graph", "dwarf,8192", "-o",
                          tmp + "/perf.data", "--", forker, count});
    ::unlink((tmp + "/perf.data").c_str());
    std::printf("%8s %12.1f %10.1f %12.2f%s\n", count.c_str(), r.max_rss_mib,
                p.max_rss_mib,
                p.max_rss_mib > 0 ? r.max_rss_mib / p.max_rss_mib : 0.0,
                r.code != 0 || p.code != 0 ? "  (a run failed)" : "");
  }
  std::filesystem::remove_all(tmp);
  return 0;
}
