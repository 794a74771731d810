// The one clock the runner stamps things with: CLOCK_MONOTONIC, the clock
// of perf samples, FIFO markers and round timings alike.
#pragma once

#include <time.h>

#include <cstdint>

namespace runner::base {

// CLOCK_MONOTONIC in nanoseconds.
inline uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace runner::base
