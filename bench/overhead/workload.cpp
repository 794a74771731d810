// CPU-bound workload for bench/overhead: a fixed amount of work split over
// N threads or N processes, bracketed by StartBenchmark/StopBenchmark when a
// runner is present. Prints its wall time and its workers' CPU time in ns.
//   workload threads|procs N WORK
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "integrations/client/instrument_hooks.hpp"

namespace {

volatile uint64_t g_sink = 0;

__attribute__((noinline)) uint64_t leaf(uint64_t x) {
  for (int i = 0; i < 1000; ++i)
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

__attribute__((noinline)) uint64_t recurse(int depth, uint64_t x) {
  if (depth == 0) return leaf(x);
  return recurse(depth - 1, x + static_cast<uint64_t>(depth)) ^ depth;
}

void work(uint64_t units) {
  uint64_t x = 1;
  for (uint64_t i = 0; i < units; ++i) x = recurse(static_cast<int>(i % 24), x);
  g_sink = g_sink + x;
}

// User + system time of this process (threads) or of its reaped children
// (procs).
uint64_t cpu_ns(bool children) {
  rusage usage{};
  ::getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &usage);
  auto ns = [](const timeval& tv) {
    return static_cast<uint64_t>(tv.tv_sec) * 1000000000ull +
           static_cast<uint64_t>(tv.tv_usec) * 1000ull;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: workload threads|procs N WORK\n");
    return 2;
  }
  bool procs = std::strcmp(argv[1], "procs") == 0;
  int n = std::atoi(argv[2]);
  uint64_t total = std::strtoull(argv[3], nullptr, 10);
  runner::client::InstrumentHooks hooks;
  hooks.set_integration("runner-bench", "1.0.0");
  hooks.start_benchmark();
  uint64_t t0 = runner::client::InstrumentHooks::now();
  const uint64_t cpu0 = cpu_ns(procs);
  if (procs) {
    std::vector<pid_t> children;
    for (int i = 0; i < n; ++i) {
      pid_t c = fork();
      if (c == 0) {
        work(total / static_cast<uint64_t>(n));
        _exit(0);
      }
      children.push_back(c);
    }
    for (pid_t c : children) waitpid(c, nullptr, 0);
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&] { work(total / static_cast<uint64_t>(n)); });
    for (auto& t : threads) t.join();
  }
  uint64_t t1 = runner::client::InstrumentHooks::now();
  const uint64_t cpu1 = cpu_ns(procs);
  hooks.stop_benchmark();
  hooks.set_executed_benchmark(static_cast<int32_t>(getpid()),
                               "bench/overhead/workload.cpp::work");
  // The elapsed time goes to $WORKLOAD_RESULT when set (stdout may be perf's
  // data stream), else to stdout.
  const char* result = std::getenv("WORKLOAD_RESULT");
  FILE* out = result != nullptr ? std::fopen(result, "w") : stdout;
  if (out == nullptr) return 1;
  // Wall ns, then the CPU ns of the workers (sampling interrupts land there;
  // the profiler's own threads do not).
  std::fprintf(out, "%llu %llu\n", static_cast<unsigned long long>(t1 - t0),
               static_cast<unsigned long long>(cpu1 - cpu0));
  if (out != stdout) std::fclose(out);
  return 0;
}
