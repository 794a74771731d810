// Shared by the e2e test programs: a CLOCK_MONOTONIC clock and a CPU-bound
// loop that runs for a given time (each program wraps it in its own
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

// Spins until `ns` have passed; the result keeps the loop from being
// optimized away.
__attribute__((always_inline)) inline uint64_t spin_for(uint64_t ns,
                                                        uint64_t seed) {
  uint64_t end = now_ns() + ns;
  uint64_t x = seed;
  while (now_ns() < end) {
    for (int i = 0; i < 10000; ++i) x = x * 6364136223846793005ull + seed;
  }
  return x;
}

}  // namespace e2e
