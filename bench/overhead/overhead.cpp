// bench/overhead: the sampling cost of `runner run` against
// `perf record -F 997 -k CLOCK_MONOTONIC --call-graph dwarf,8192
// --user-callchains -o -`, measured side by side in one interleaved run.
//   overhead RUNNER WORKLOAD [REPS] [WORK]
// Prints, per variant (threads, procs): median workload wall and CPU time
// bare, under the runner, under perf record and under the runner in fp mode
// (the sampling interrupts alone), the slowdowns and the runner/perf ratio;
// the runner's drain thread CPU; then the fixed start+stop cost of `runner run
// -- true` vs `perf record -- true`; lost samples at dwarf,32768; the runner's
// own peak RSS besides its ring buffers.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/fs.hpp"
#include "bench/bench_util.hpp"
#include "format/format.hpp"

using runner::bench::median;
using runner::bench::run_quietly;

namespace {

struct Sample {
  double wall_ns = 0, cpu_ns = 0;
};

// The workload writes its elapsed ns and its workers' CPU ns to
// $WORKLOAD_RESULT.
Sample workload_result(const std::string& tmp) {
  Sample sample;
  auto text = runner::base::read_file(tmp + "/result");
  ::unlink((tmp + "/result").c_str());
  if (text)
    std::sscanf(text->c_str(), "%lf %lf", &sample.wall_ns, &sample.cpu_ns);
  return sample;
}

// The `runner` section of a profile folder's perf.metadata.
std::optional<runner::format::RunnerSection> read_runner_metadata(
    const std::string& folder) {
  auto text =
      runner::base::read_file(runner::format::ProfileLayout(folder).metadata());
  if (!text) return std::nullopt;
  auto meta = runner::format::read_perf_metadata(*text, {.debug_info = false});
  if (!meta) return std::nullopt;
  return meta->metadata.runner;
}

// Its sampler counters (zero when the run was not sampled).
runner::format::SamplerSection sampler_of(
    const runner::format::RunnerSection& r) {
  return r.sampler.value_or(runner::format::SamplerSection{});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: overhead RUNNER WORKLOAD [REPS] [WORK]\n");
    return 2;
  }
  std::string runner = argv[1], workload = argv[2];
  int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  std::string work = argc > 4 ? argv[4] : "40000";
  char tmpl[] = "/tmp/runner-overhead.XXXXXX";
  std::string tmp = ::mkdtemp(tmpl);
  std::string perf_out = runner::format::ProfileLayout(tmp).pipedata();
  ::setenv("WORKLOAD_RESULT", (tmp + "/result").c_str(), 1);

  std::printf("bench/overhead: %d interleaved reps, work=%s\n", reps,
              work.c_str());
  std::printf(
      "wall: the workload's own elapsed time; cpu: its workers' CPU time, "
      "where the kernel's per-sample cost lands (less sensitive to other "
      "load). fp: the runner without stack copies (interrupt-only floor).\n");
  std::printf("%-8s %-5s %10s %10s %10s %10s %9s %9s %9s %12s\n", "variant", "",
              "bare ms", "runner ms", "perf ms", "fp ms", "runner +%",
              "perf +%", "fp +%", "runner/perf");
  std::vector<double> drain_ms;
  for (const char* variant : {"threads", "procs"}) {
    // [configuration][rep]: wall and CPU ns.
    std::vector<double> wall[4], cpu[4];
    auto record = [&](int config) {
      Sample sample = workload_result(tmp);
      wall[config].push_back(sample.wall_ns);
      cpu[config].push_back(sample.cpu_ns);
    };
    for (int rep = 0; rep < reps; ++rep) {
      std::vector<std::string> cmd = {workload, variant, "2", work};
      run_quietly(cmd);
      record(0);
      std::vector<std::string> r = {runner,           "run",
                                    "--allow-empty",  "--profile-folder",
                                    tmp + "/profile", "--"};
      r.insert(r.end(), cmd.begin(), cmd.end());
      run_quietly(r);
      record(1);
      if (auto meta = read_runner_metadata(tmp + "/profile"))
        drain_ms.push_back(static_cast<double>(sampler_of(*meta).drain_cpu_us) /
                           1000.0);
      std::filesystem::remove_all(tmp + "/profile");
      std::vector<std::string> p = {
          "sh", "-c",
          "perf record -q -F 997 -k CLOCK_MONOTONIC --call-graph dwarf,8192 "
          "--user-callchains -o - -- " +
              workload + " " + variant + " 2 " + work + " > " + perf_out};
      run_quietly(p);
      record(2);
      std::vector<std::string> fp = {
          runner,           "run", "--allow-empty",
          "--call-graph",   "fp",  "--profile-folder",
          tmp + "/profile", "--"};
      fp.insert(fp.end(), cmd.begin(), cmd.end());
      run_quietly(fp);
      record(3);
      std::filesystem::remove_all(tmp + "/profile");
    }
    for (bool is_cpu : {false, true}) {
      const auto* m = is_cpu ? cpu : wall;
      double b = median(m[0]), r = median(m[1]), p = median(m[2]),
             f = median(m[3]);
      double rs = (r / b - 1) * 100, ps = (p / b - 1) * 100,
             fs = (f / b - 1) * 100;
      std::printf(
          "%-8s %-5s %10.1f %10.1f %10.1f %10.1f %8.1f%% %8.1f%% %8.1f%% "
          "%12.2f\n",
          variant, is_cpu ? "cpu" : "wall", b / 1e6, r / 1e6, p / 1e6, f / 1e6,
          rs, ps, fs, ps > 0 ? rs / ps : 0.0);
    }
  }
  std::printf("runner drain thread CPU per run: %.1f ms (median)\n",
              median(drain_ms));

  std::vector<double> runner_true, perf_true;
  for (int rep = 0; rep < reps; ++rep) {
    runner_true.push_back(
        run_quietly({runner, "run", "--allow-empty", "--profile-folder",
                     tmp + "/profile", "--", "true"})
            .wall_ms);
    std::filesystem::remove_all(tmp + "/profile");
    perf_true.push_back(
        run_quietly(
            {"sh", "-c",
             "perf record -q -F 997 -k CLOCK_MONOTONIC --call-graph dwarf,8192 "
             "--user-callchains -o - -- true > " +
                 perf_out})
            .wall_ms);
  }
  std::printf(
      "\nfixed start+stop cost: runner run -- true %.1f ms, "
      "perf record -- true %.1f ms (ratio %.2f)\n",
      median(runner_true), median(perf_true),
      median(runner_true) / median(perf_true));

  // Lost samples with 32 KiB stacks, and the runner's own memory.
  auto o = run_quietly({runner, "run", "--allow-empty", "--call-graph",
                        "dwarf,32768", "--profile-folder", tmp + "/profile",
                        "--", workload, "threads", "2", work});
  if (auto r = read_runner_metadata(tmp + "/profile")) {
    std::printf("dwarf,32768 on 2 threads: %llu samples, %llu lost\n",
                static_cast<unsigned long long>(sampler_of(*r).samples),
                static_cast<unsigned long long>(sampler_of(*r).lost_samples));
    double rss = static_cast<double>(r->max_rss_kib.value_or(0)) / 1024.0;
    double rings = static_cast<double>(sampler_of(*r).ring_buffers_bytes) /
                   (1024.0 * 1024.0);
    std::printf(
        "runner peak RSS %.1f MiB, of which ring buffers up to "
        "%.1f MiB: %.1f MiB besides them\n",
        rss, rings, rss - rings);
  } else {
    std::printf("dwarf,32768 run wrote no metadata (exit %d)\n", o.code);
  }
  std::filesystem::remove_all(tmp);
  return 0;
}
