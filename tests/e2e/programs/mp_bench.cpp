// Multi-process benchmark for end-to-end tests.
//  window 1 ("workers"): forks kWorkers children that, like the parent,
//    spin in worker_spin();
//  then, while sampling is OFF, forks a child that execs child_prog;
//  window 2 ("exec_child"): tells the child to go; it spins in child_hot()
//    and announces itself (CurrentBenchmark with its own pid) before exiting.
//   mp_bench <path of child_prog> [spin_ms]
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "integrations/client/instrument_hooks.hpp"
#include "integrations/results/walltime_results.hpp"
#include "tests/e2e/programs/spin.hpp"

namespace {

constexpr int kWorkers = 2;
volatile uint64_t g_sink = 0;

__attribute__((noinline)) void worker_spin(int ms) {
  g_sink = g_sink + e2e::spin_for(static_cast<uint64_t>(ms) * 1000000ull, 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mp_bench CHILD_PROG [SPIN_MS]\n");
    return 2;
  }
  int spin_ms = argc > 2 ? std::atoi(argv[2]) : 300;
  runner::client::InstrumentHooks hooks;
  hooks.set_integration("runner-e2e", "1.0.0");
  const int32_t pid = static_cast<int32_t>(getpid());
  std::vector<runner::results::BenchmarkResult> results;

  // ---- window 1: forked workers ----
  hooks.start_benchmark();
  uint64_t t0 = e2e::now_ns();
  std::vector<pid_t> workers;
  for (int i = 0; i < kWorkers; ++i) {
    pid_t w = fork();
    if (w == 0) {
      worker_spin(spin_ms);
      _exit(0);
    }
    workers.push_back(w);
  }
  worker_spin(spin_ms);
  for (pid_t w : workers) waitpid(w, nullptr, 0);
  uint64_t t1 = e2e::now_ns();
  hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_START, t0);
  hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_END, t1);
  hooks.stop_benchmark();
  hooks.set_executed_benchmark(pid, "tests/e2e/programs/mp_bench.cpp::workers");
  {
    runner::results::BenchmarkResult r;
    r.name = "workers";
    r.uri = "tests/e2e/programs/mp_bench.cpp::workers";
    std::vector<uint64_t> rounds{t1 - t0};
    r.stats = runner::results::compute_stats(rounds);
    results.push_back(r);
  }

  // ---- exec while sampling is disabled ----
  int go[2], ready[2];
  if (pipe(go) != 0 || pipe(ready) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    dup2(go[0], STDIN_FILENO);
    close(go[0]);
    close(go[1]);
    close(ready[0]);
    setenv("E2E_READY_FD", std::to_string(ready[1]).c_str(), 1);
    std::string ms = std::to_string(spin_ms);
    execl(argv[1], argv[1], ms.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(go[0]);
  // child_prog writes a byte once in main: exec'd and loaded (its mappings
  // made) outside any window. EOF if it died before.
  close(ready[1]);
  char byte;
  if (read(ready[0], &byte, 1) != 1) return 1;
  close(ready[0]);

  // ---- window 2: the exec'd program ----
  hooks.start_benchmark();
  t0 = e2e::now_ns();
  if (write(go[1], "g", 1) != 1) return 1;
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  t1 = e2e::now_ns();
  hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_START, t0);
  hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_END, t1);
  hooks.stop_benchmark();
  hooks.set_executed_benchmark(pid,
                               "tests/e2e/programs/mp_bench.cpp::exec_child");
  {
    runner::results::BenchmarkResult r;
    r.name = "exec_child";
    r.uri = "tests/e2e/programs/mp_bench.cpp::exec_child";
    std::vector<uint64_t> rounds{t1 - t0};
    r.stats = runner::results::compute_stats(rounds);
    results.push_back(r);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "mp_bench: child failed\n");
    return 1;
  }
  auto written = runner::results::write_results(
      {"runner-e2e", "1.0.0", static_cast<uint32_t>(pid)}, results);
  return written ? 0 : 1;
}
