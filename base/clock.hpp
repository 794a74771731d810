// The one clock the runner stamps things with: CLOCK_MONOTONIC, the clock
// of perf samples, FIFO markers and round timings alike.
#pragma once

#include <sys/resource.h>
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

// CPU time (user + system) in nanoseconds of `who`: RUSAGE_SELF (every
// thread of the process) or RUSAGE_THREAD (the calling thread); 0 when
// getrusage fails.
inline uint64_t cpu_time_ns(int who) {
  rusage usage{};
  if (::getrusage(who, &usage) != 0) return 0;
  auto ns = [](const timeval& tv) {
    return static_cast<uint64_t>(tv.tv_sec) * 1'000'000'000u +
           static_cast<uint64_t>(tv.tv_usec) * 1'000u;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

}  // namespace runner::base
