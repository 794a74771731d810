// Small timing helpers shared by the symbols benchmarks.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace runner::symbols::bench {

inline double now_ms() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(
             Clock::now().time_since_epoch())
      .count();
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace runner::symbols::bench
