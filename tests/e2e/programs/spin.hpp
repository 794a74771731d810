// Shared by the e2e test programs: a CLOCK_MONOTONIC clock and a CPU-bound
// loop that runs for a given CPU time (each program wraps it in its own
// noinline hot function so samples have a known leaf).
#pragma once

#include <time.h>

#include <cstdint>

namespace e2e {

inline uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// The calling thread's CPU time.
inline uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Spins until this thread has run on a CPU for `ns` (CPU time, not wall
// time: on a busy machine it takes longer but gets as many cpu-clock
// samples). The clock is read every 100,000 steps (~0.1 ms), so the
// syscall behind it is a negligible share of the samples; the result keeps
// the loop from being optimized away.
__attribute__((always_inline)) inline uint64_t spin_for(uint64_t ns,
                                                        uint64_t seed) {
  uint64_t end = thread_cpu_ns() + ns;
  uint64_t x = seed;
  while (thread_cpu_ns() < end) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ull + seed;
  }
  return x;
}

}  // namespace e2e
