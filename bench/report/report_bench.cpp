// bench/report: `runner report --format perf-script` against `perf script`
// on the same perf.pipedata, both to /dev/null, one run each, interleaved
// REPS times: wall time (median) and peak RSS of each.
//   report_bench RUNNER PROFILE_FOLDER [REPS]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "format/format.hpp"

namespace {

struct Measure {
  double seconds = 0;
  long max_rss_kib = 0;
  int status = -1;
};

Measure run(const std::vector<std::string>& argv) {
  timespec t0{}, t1{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  Measure m;
  rusage usage{};
  wait4(pid, &m.status, 0, &usage);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  m.seconds = static_cast<double>(t1.tv_sec - t0.tv_sec) +
              static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
  m.max_rss_kib = usage.ru_maxrss;
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: report_bench RUNNER PROFILE_FOLDER [REPS]\n");
    return 2;
  }
  std::string runner = argv[1], folder = argv[2];
  int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  std::vector<double> ours, perf;
  long ours_rss = 0, perf_rss = 0;
  for (int i = 0; i < reps; ++i) {
    Measure a = run({runner, "report", "--format", "perf-script", folder});
    Measure b = run({"perf", "script", "-f", "-i",
                     runner::format::ProfileLayout(folder).pipedata()});
    if (a.status != 0 || b.status != 0) {
      std::fprintf(stderr, "a run failed (runner %d, perf %d)\n", a.status,
                   b.status);
      return 1;
    }
    ours.push_back(a.seconds);
    perf.push_back(b.seconds);
    ours_rss = std::max(ours_rss, a.max_rss_kib);
    perf_rss = std::max(perf_rss, b.max_rss_kib);
  }
  double o = median(ours), p = median(perf);
  std::printf("runner report --format perf-script: %.3f s, peak RSS %.1f MiB\n",
              o, static_cast<double>(ours_rss) / 1024.0);
  std::printf("perf script:                        %.3f s, peak RSS %.1f MiB\n",
              p, static_cast<double>(perf_rss) / 1024.0);
  std::printf("speed-up %.1fx, memory ratio %.2f\n", p / o,
              static_cast<double>(ours_rss) / static_cast<double>(perf_rss));
  return 0;
}
