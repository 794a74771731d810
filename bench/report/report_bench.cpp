// bench/report: `runner report --format perf-script` against `perf script`
// on the same perf.pipedata, both to /dev/null, one run each, interleaved
// REPS times: wall time (median) and peak RSS of each.
//   report_bench RUNNER PROFILE_FOLDER [REPS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "format/format.hpp"

using runner::bench::median;
using runner::bench::run_quietly;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: report_bench RUNNER PROFILE_FOLDER [REPS]\n");
    return 2;
  }
  std::string runner = argv[1], folder = argv[2];
  int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  std::vector<double> ours, perf;
  double ours_rss = 0, perf_rss = 0;
  for (int i = 0; i < reps; ++i) {
    auto a = run_quietly({runner, "report", "--format", "perf-script", folder});
    auto b = run_quietly({"perf", "script", "-f", "-i",
                          runner::format::ProfileLayout(folder).pipedata()});
    if (a.code != 0 || b.code != 0) {
      std::fprintf(stderr, "a run failed (runner exit %d, perf exit %d)\n",
                   a.code, b.code);
      return 1;
    }
    ours.push_back(a.wall_ms / 1000);
    perf.push_back(b.wall_ms / 1000);
    ours_rss = std::max(ours_rss, a.max_rss_mib);
    perf_rss = std::max(perf_rss, b.max_rss_mib);
  }
  double o = median(ours), p = median(perf);
  std::printf("runner report --format perf-script: %.3f s, peak RSS %.1f MiB\n",
              o, ours_rss);
  std::printf("perf script:                        %.3f s, peak RSS %.1f MiB\n",
              p, perf_rss);
  std::printf("speed-up %.1fx, memory ratio %.2f\n", p / o,
              ours_rss / perf_rss);
  return 0;
}
