// Change points: steps in the level of a noisy series of run-level
// measurements (one value per stored run, oldest first). The method is
// documented in docs/history.md ("How change points are found").
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace runner::history {

struct DetectSettings {
  // A step smaller than this (relative, |after / before - 1|) is not
  // reported, however certain.
  double min_change = 0.01;
  // Fewer points than this on either side of a step: not a step.
  size_t min_segment = 3;
  // The cost of one more change point, in units of the noise's variance:
  // how much a change point must lower the squared deviations from the
  // segments' means, in noise sigmas. 0: 3 + 1.5 · ln(points), 9.1 for 60
  // points, 13.4 for 1000.
  double penalty = 0;
  // A step whose p-value (Welch's t) is above this is not reported.
  double max_p_value = 0.002;
};

// One step: the level changes from `before` to `after` at points[start].
struct Step {
  size_t start = 0;              // first point of the new level
  double before = 0, after = 0;  // the two levels (medians), in the
                                 // series' unit
  double change = 0;             // after / before - 1
  double low = 0, high = 0;      // 95% interval of change
  double p_value = 1;            // of the step, as tested (docs/history.md)
};

// The steps of `values`, oldest first. Values that are not finite and > 0
// are left out (a step's start is still an index in `values`).
std::vector<Step> find_change_points(std::span<const double> values,
                                     const DetectSettings& settings);

}  // namespace runner::history
