// One benchmark window in which 20 processes of the same binary run:
//   many_procs SPINNER_PATH [COUNT]
// forks COUNT children that each exec SPINNER_PATH (30 ms of spinning).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "integrations/client/instrument_hooks.hpp"
#include "integrations/results/walltime_results.hpp"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int count = argc > 2 ? std::atoi(argv[2]) : 20;
  runner::client::InstrumentHooks hooks;
  hooks.set_integration("runner-e2e", "1.0.0");
  int32_t pid = static_cast<int32_t>(getpid());
  hooks.start_benchmark();
  uint64_t t0 = runner::client::InstrumentHooks::now();
  std::vector<pid_t> children;
  for (int i = 0; i < count; ++i) {
    pid_t c = fork();
    if (c == 0) {
      execl(argv[1], argv[1], "30", static_cast<char*>(nullptr));
      _exit(127);
    }
    children.push_back(c);
  }
  bool ok = true;
  for (pid_t c : children) {
    int status = 0;
    waitpid(c, &status, 0);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  uint64_t t1 = runner::client::InstrumentHooks::now();
  hooks.stop_benchmark();
  const char* uri = "tests/e2e/programs/many_procs.cpp::spawn20";
  hooks.set_executed_benchmark(pid, uri);
  runner::results::BenchmarkResult r;
  r.name = "spawn20";
  r.uri = uri;
  std::vector<uint64_t> rounds{t1 - t0};
  r.stats = runner::results::compute_stats(rounds);
  std::vector<runner::results::BenchmarkResult> results{r};
  if (!runner::results::write_results(
          {"runner-e2e", "1.0.0", static_cast<uint32_t>(pid)}, results))
    return 1;
  return ok ? 0 : 1;
}
