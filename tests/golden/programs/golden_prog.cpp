// The program most golden profile folders (tests/golden/README.md) are
// recorded from. It uses the C library only (no libstdc++ at run time, so
// the folders stay small), and is built -O2 -g with frame pointers and
// without sibling calls, so that every function below keeps its frame, except
// leaf functions such as leaf_mix(), where GCC omits it anyway (a
// frame-pointer call chain then skips the leaf's caller, as it would in any
// real program).
// Each mode announces its benchmarks through the instrument-hooks C API like
// an integration: StartBenchmark, measured rounds (a RoundStart/RoundEnd
// marker pair each) with harness work between them, StopBenchmark, then
// CurrentBenchmark with the benchmark's URI.
//
//   golden_prog bench [NAME]    three benchmarks (or only NAME): "nested"
//                               (a three-deep call chain), "qsort" (our
//                               comparator called by the C library),
//                               "recurse" (24 frames of recursion)
//   golden_prog jit [--no-map]  "jit": code copied into an anonymous
//                               executable mapping, an outer function that
//                               calls an inner loop, run by the process and
//                               by a child it forks in each round; both
//                               functions are listed in each process's
//                               /tmp/perf-<pid>.map unless --no-map (so the
//                               same JIT names come from two perf maps)
//   golden_prog deep            "deep": 200 frames of recursion with a
//                               buffer in each, deeper than a small DWARF
//                               stack copy
//
// The work is a fixed number of iterations (not a time), so that two runs
// take the same paths.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "integrations/client/instrument_hooks.h"

namespace {

constexpr int kRounds = 3;
volatile uint64_t g_sink = 0;

// ---- bench ------------------------------------------------------------------

__attribute__((noinline)) uint64_t leaf_mix(uint64_t x, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

__attribute__((noinline)) uint64_t middle(uint64_t x) {
  uint64_t y = leaf_mix(x, 200000);
  return y ^ (y >> 13);
}

__attribute__((noinline)) void nested_round() {
  uint64_t x = 7;
  for (int i = 0; i < 100; ++i) x = middle(x) + 1;
  g_sink = g_sink + x;
}

__attribute__((noinline)) int compare_u32(const void* a, const void* b) {
  uint32_t x = *static_cast<const uint32_t*>(a);
  uint32_t y = *static_cast<const uint32_t*>(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

__attribute__((noinline)) void qsort_round() {
  constexpr size_t kCount = 200000;
  auto* values = static_cast<uint32_t*>(std::malloc(kCount * sizeof(uint32_t)));
  if (values == nullptr) std::abort();
  uint32_t seed = 12345;
  for (size_t i = 0; i < kCount; ++i) {
    seed = seed * 1664525u + 1013904223u;
    values[i] = seed;
  }
  std::qsort(values, kCount, sizeof(uint32_t), compare_u32);
  g_sink = g_sink + values[kCount / 2];
  std::free(values);
}

__attribute__((noinline)) uint64_t recurse(int depth, uint64_t x) {
  if (depth == 0) return leaf_mix(x, 50000);
  uint64_t y = recurse(depth - 1, x + 1);
  asm volatile("" : "+r"(y));
  return y + static_cast<uint64_t>(depth);
}

__attribute__((noinline)) void recurse_round() {
  uint64_t x = 0;
  for (int i = 0; i < 400; ++i) x += recurse(24, x);
  g_sink = g_sink + x;
}

// Work between rounds: inside the benchmark window, outside every round.
__attribute__((noinline)) void harness_setup() {
  g_sink = g_sink + leaf_mix(g_sink, 2000000);
}

// ---- jit --------------------------------------------------------------------

// x86-64 machine code of two frame-pointer functions:
//   jit_inner (offset 0):   push %rbp; mov %rsp,%rbp;
//                           1: dec %rdi; jnz 1b; pop %rbp; ret
//   jit_outer (offset 16):  push %rbp; mov %rsp,%rbp; call jit_inner;
//                           pop %rbp; ret
constexpr size_t kJitInner = 0, kJitInnerSize = 11;
constexpr size_t kJitOuter = 16, kJitOuterSize = 11;
constexpr uint8_t kJitCode[] = {
    0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf, 0x75, 0xfb, 0x5d, 0xc3,  //
    0x90, 0x90, 0x90, 0x90, 0x90,                                      //
    0x55, 0x48, 0x89, 0xe5, 0xe8, 0xe7, 0xff, 0xff, 0xff, 0x5d, 0xc3,
};

using JitFn = void (*)(uint64_t);

bool g_write_map = false;
uintptr_t g_jit_base = 0;

// Where perf (and the runner) look for a JIT's symbols.
void write_perf_map() {
  if (!g_write_map) return;
  char path[64];
  std::snprintf(path, sizeof(path), "/tmp/perf-%d.map",
                static_cast<int>(getpid()));
  FILE* map = std::fopen(path, "w");
  if (map == nullptr) std::abort();
  std::fprintf(
      map, "%lx %zx jit_inner\n%lx %zx jit_outer\n",
      static_cast<unsigned long>(g_jit_base + kJitInner), kJitInnerSize,
      static_cast<unsigned long>(g_jit_base + kJitOuter), kJitOuterSize);
  std::fclose(map);
}

JitFn make_jit_code() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* code = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) std::abort();
  std::memcpy(code, kJitCode, sizeof(kJitCode));
  if (mprotect(code, page, PROT_READ | PROT_EXEC) != 0) std::abort();
  g_jit_base = reinterpret_cast<uintptr_t>(code);
  write_perf_map();
  return reinterpret_cast<JitFn>(g_jit_base + kJitOuter);
}

JitFn g_jit = nullptr;

__attribute__((noinline)) void jit_round() {
  const pid_t child = fork();
  if (child == 0) {
    write_perf_map();
    g_jit(40000000);
    _exit(0);
  }
  g_jit(40000000);
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
    std::abort();
}

// ---- deep -------------------------------------------------------------------

__attribute__((noinline)) uint64_t deep_recurse(int depth, uint64_t x) {
  volatile uint8_t buffer[64];
  buffer[depth % 64] = static_cast<uint8_t>(x);
  if (depth == 0) return leaf_mix(x, 20000000);
  uint64_t y = deep_recurse(depth - 1, x + buffer[depth % 64]);
  asm volatile("" : "+r"(y));
  return y + 1;
}

__attribute__((noinline)) void deep_round() {
  g_sink = g_sink + deep_recurse(200, g_sink);
}

// ---- driver -----------------------------------------------------------------

using RoundFn = void (*)();

int run_benchmark(InstrumentHooks* hooks, const char* name, RoundFn round) {
  const int32_t pid = static_cast<int32_t>(getpid());
  uint64_t starts[kRounds], ends[kRounds];
  if (instrument_hooks_start_benchmark(hooks) != 0) return 1;
  for (int r = 0; r < kRounds; ++r) {
    harness_setup();
    starts[r] = instrument_hooks_current_timestamp();
    round();
    ends[r] = instrument_hooks_current_timestamp();
  }
  harness_setup();
  for (int r = 0; r < kRounds; ++r) {
    instrument_hooks_add_marker(hooks, pid, MARKER_TYPE_BENCHMARK_START,
                                starts[r]);
    instrument_hooks_add_marker(hooks, pid, MARKER_TYPE_BENCHMARK_END, ends[r]);
  }
  if (instrument_hooks_stop_benchmark(hooks) != 0) return 1;
  char uri[128];
  std::snprintf(uri, sizeof(uri), "tests/golden/programs/golden_prog.cpp::%s",
                name);
  if (instrument_hooks_set_executed_benchmark(hooks, pid, uri) != 0) return 1;
  std::fprintf(stderr, "Measured: %s\n", uri);
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: golden_prog bench [NAME]|jit [--no-map]|deep\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const char* mode = argv[1];
  InstrumentHooks* hooks = instrument_hooks_init();
  if (hooks == nullptr) return 1;
  if (!instrument_hooks_is_instrumented(hooks)) {
    std::fprintf(stderr, "golden_prog: not instrumented (no runner)\n");
    return 1;
  }
  instrument_hooks_set_integration(hooks, "runner-golden", "1.0.0");
  int status = 0;
  if (std::strcmp(mode, "bench") == 0 && argc <= 3) {
    const char* only = argc == 3 ? argv[2] : nullptr;
    static constexpr struct {
      const char* name;
      RoundFn round;
    } kBenchmarks[] = {{"nested", nested_round},
                       {"qsort", qsort_round},
                       {"recurse", recurse_round}};
    bool any = false;
    for (const auto& bench : kBenchmarks) {
      if (only != nullptr && std::strcmp(only, bench.name) != 0) continue;
      status |= run_benchmark(hooks, bench.name, bench.round);
      any = true;
    }
    if (!any) {
      instrument_hooks_deinit(hooks);
      return usage();
    }
  } else if (std::strcmp(mode, "jit") == 0 &&
             (argc == 2 ||
              (argc == 3 && std::strcmp(argv[2], "--no-map") == 0))) {
    g_write_map = argc == 2;
    g_jit = make_jit_code();
    status |= run_benchmark(hooks, "jit", jit_round);
  } else if (std::strcmp(mode, "deep") == 0 && argc == 2) {
    status |= run_benchmark(hooks, "deep", deep_round);
  } else {
    instrument_hooks_deinit(hooks);
    return usage();
  }
  instrument_hooks_deinit(hooks);
  return status;
}
