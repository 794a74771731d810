// Synthetic run histories for the change-point bench and the unit tests of
// history/: a level (1000 ns) with relative steps at given runs and
// run-to-run noise, from a seeded generator of our own (splitmix64 and
// Box-Muller), so that a seed gives the same series with any compiler and
// standard library.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

namespace runner::bench {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() {  // in (0, 1)
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }
  double normal() {
    const double r = std::sqrt(-2 * std::log(uniform()));
    return r * std::cos(2 * std::numbers::pi * uniform());
  }

 private:
  uint64_t state_;
};

struct StepAt {
  size_t run;     // first run at the new level
  double change;  // relative: +0.03 is 3% slower
};

enum class Noise {
  kLognormal,  // value = level · exp(noise · N(0, 1))
  kNormal,     // value = level · (1 + noise · N(0, 1))
};

inline std::vector<double> synthetic_series(size_t runs, double noise,
                                            const std::vector<StepAt>& steps,
                                            uint64_t seed,
                                            Noise kind = Noise::kLognormal) {
  Random random(seed * 0x2545f4914f6cdd1dULL + 1);
  std::vector<double> values(runs);
  double level = 1000;
  for (size_t i = 0; i < runs; ++i) {
    for (const StepAt& s : steps)
      if (s.run == i) level *= 1 + s.change;
    const double e = random.normal() * noise;
    values[i] = kind == Noise::kLognormal ? level * std::exp(e)
                                          : level * std::max(0.05, 1 + e);
  }
  return values;
}

}  // namespace runner::bench
