// Example benchmark with three known hot functions (a recursive fib, a
// memcpy loop and a sort). It talks to the runner through the
// instrument-hooks client exactly like CodSpeed's integrations do: for each
// benchmark StartBenchmark, the measured rounds with RoundStart/RoundEnd
// markers, StopBenchmark, then CurrentBenchmark{getpid(), uri}; at the end
// it writes results/<pid>.json in the walltime results schema, with the raw
// rounds (times_per_round_ns, one iteration per round).
//
//   bench_example [--rounds N] [--scale F] [--only NAME]
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "integrations/client/instrument_hooks.hpp"
#include "integrations/results/walltime_results.hpp"

namespace {

volatile uint64_t g_sink = 0;  // keeps results alive

__attribute__((noinline)) uint64_t fib(unsigned n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) void copy_buffers(std::vector<char>& dst,
                                            const std::vector<char>& src,
                                            int times) {
  for (int i = 0; i < times; ++i) {
    std::memcpy(dst.data(), src.data(), src.size());
    g_sink = g_sink + static_cast<unsigned char>(
                          dst[static_cast<size_t>(i) % dst.size()]);
  }
}

__attribute__((noinline)) void sort_values(std::vector<uint32_t>& values) {
  std::sort(values.begin(), values.end());
  g_sink = g_sink + values[values.size() / 2];
}

struct Options {
  int rounds = 5;
  double scale = 1.0;
  std::string only;
};

using BenchFn = void (*)(const Options&);

void bench_fib(const Options& options) {
  unsigned n = 32 + (options.scale >= 2.0 ? 1 : 0);
  for (int i = 0; i < 3; ++i) g_sink = g_sink + fib(n);
}

void bench_memcpy(const Options& options) {
  static std::vector<char> src(4 << 20, 'x');
  static std::vector<char> dst(4 << 20);
  copy_buffers(dst, src, static_cast<int>(240 * options.scale));
}

void bench_sort(const Options& options) {
  std::mt19937 rng(42);
  std::vector<uint32_t> values(static_cast<size_t>(800000 * options.scale));
  for (auto& v : values) v = rng();
  sort_values(values);
}

struct Benchmark {
  const char* name;
  BenchFn fn;
};

constexpr Benchmark kBenchmarks[] = {
    {"fib", bench_fib},
    {"memcpy", bench_memcpy},
    {"sort", bench_sort},
};

int usage() {
  std::fprintf(stderr,
               "usage: bench_example [--rounds N] [--scale F] [--only NAME]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    if (arg == "--rounds") {
      options.rounds = std::atoi(argv[++i]);
    } else if (arg == "--scale") {
      options.scale = std::atof(argv[++i]);
    } else if (arg == "--only") {
      options.only = argv[++i];
    } else {
      return usage();
    }
  }
  if (options.rounds < 1 || options.scale <= 0) return usage();

  runner::client::InstrumentHooks hooks;
  if (!hooks.instrumented()) {
    std::fprintf(stderr, "NOTICE: not instrumented (no runner detected)\n");
  }
  hooks.set_integration("runner-example", "0.1.0");

  const int32_t pid = static_cast<int32_t>(::getpid());
  std::vector<runner::results::BenchmarkResult> results;
  for (const Benchmark& bench : kBenchmarks) {
    if (!options.only.empty() && options.only != bench.name) continue;
    std::string uri =
        std::string("integrations/examples/bench_example.cpp::") + bench.name;
    std::vector<uint64_t> round_ns;
    std::vector<std::pair<uint64_t, uint64_t>> rounds;
    hooks.start_benchmark();
    for (int r = 0; r < options.rounds; ++r) {
      uint64_t start = runner::client::InstrumentHooks::now();
      bench.fn(options);
      uint64_t end = runner::client::InstrumentHooks::now();
      rounds.emplace_back(start, end);
      round_ns.push_back(end - start);
    }
    for (auto [start, end] : rounds) {
      hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_START, start);
      hooks.add_marker(pid, MARKER_TYPE_BENCHMARK_END, end);
    }
    hooks.stop_benchmark();
    hooks.set_executed_benchmark(pid, uri);
    std::fprintf(stderr, "Measured: %s\n", uri.c_str());

    runner::results::BenchmarkResult result;
    result.name = bench.name;
    result.uri = uri;
    result.stats = runner::results::compute_stats(round_ns);
    result.iters_per_round.assign(round_ns.size(), 1);
    result.times_per_round_ns = std::move(round_ns);
    results.push_back(std::move(result));
  }

  runner::results::Creator creator{"runner-example", "0.1.0",
                                   static_cast<uint32_t>(pid)};
  auto written = runner::results::write_results(creator, results);
  if (!written) {
    std::fprintf(stderr, "bench_example: %s\n", written.error().what().c_str());
    return 1;
  }
  return 0;
}
