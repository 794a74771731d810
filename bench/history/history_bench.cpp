// bench/history: how well history's change-point detection meets its goals
// on synthetic run histories (bench/history/synthetic.hpp), over SEEDS
// seeds per row, and how long it takes.
//   history_bench [SEEDS [PENALTY [MAX_P [MIN_SEGMENT]]]]
// (1000 seeds and DetectSettings' defaults; PENALTY 0: the default)
// Per noise level and kind, the share of series where:
//   flat       a flat 60-run series gets a change point (a false one)
//   outlier    a flat 60-run series with one run 30% slower gets one
//   +3%, +10%  in a 60-run series with +3% at run 20 and +10% at run 40,
//              a change point up is found within 5 runs of the step,
//              within 1 run, exactly at it
//   extra      that series gets a change point further from both
//   flat 1000  a flat 1000-run series gets one (SEEDS / 5 seeds)
// Then the share of flat 1000-run series whose noise changes (1% and 3%
// by turns every 50 runs) that get a change point, and the time of 50
// series × 1000 runs (each with a step every 100
// runs) and of one flat and one stepped series of 10,000 runs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "bench/bench_util.hpp"
#include "bench/history/synthetic.hpp"
#include "history/change_points.hpp"

namespace {

using runner::bench::Noise;
using runner::bench::StepAt;
using runner::bench::synthetic_series;
using runner::history::DetectSettings;
using runner::history::find_change_points;
using runner::history::Step;

struct Found {
  size_t found = 0, near = 0, exact = 0;  // within kFound runs, ±1, at it
};

struct Rates {
  size_t flat = 0, outlier = 0, extra = 0, flat_long = 0, seeds = 0,
         long_seeds = 0;
  Found small, large;
};

// A step is found when a change point of its sign is within this many runs
// of it; a change point found further from both steps is an extra one.
constexpr size_t kFound = 5;

const std::vector<StepAt> kSteps = {{20, 0.03}, {40, 0.10}};

bool within(size_t start, size_t run, size_t runs) {
  return start + runs >= run && start <= run + runs;
}

// Whether `steps` has one near the step at `run`, and how near.
void count_step(const std::vector<Step>& steps, size_t run, Found& f) {
  bool found = false, near = false, exact = false;
  for (const Step& s : steps) {
    if (s.change <= 0 || !within(s.start, run, kFound)) continue;
    found = true;
    near |= within(s.start, run, 1);
    exact |= s.start == run;
  }
  f.found += found, f.near += near, f.exact += exact;
}

void count_steps(const std::vector<Step>& steps, Rates& r) {
  count_step(steps, kSteps[0].run, r.small);
  count_step(steps, kSteps[1].run, r.large);
  bool extra = false;
  for (const Step& s : steps)
    extra |= !within(s.start, kSteps[0].run, kFound) &&
             !within(s.start, kSteps[1].run, kFound);
  r.extra += extra;
}

Rates measure(double noise, Noise kind, size_t seeds,
              const DetectSettings& settings) {
  Rates r;
  r.seeds = seeds;
  for (size_t seed = 1; seed <= seeds; ++seed) {
    std::vector<double> flat = synthetic_series(60, noise, {}, seed, kind);
    r.flat += !find_change_points(flat, settings).empty();
    flat[seed % 60] *= 1.3;
    r.outlier += !find_change_points(flat, settings).empty();
    count_steps(find_change_points(
                    synthetic_series(60, noise, kSteps, seed, kind), settings),
                r);
  }
  r.long_seeds = seeds / 5;
  for (size_t seed = 1; seed <= r.long_seeds; ++seed)
    r.flat_long +=
        !find_change_points(
             synthetic_series(1000, noise, {}, seed + 7919, kind), settings)
             .empty();
  return r;
}

double pct(size_t count, size_t of) {
  return of == 0 ? 0 : 100.0 * static_cast<double>(count) / of;
}

void print_row(double noise, Noise kind, const Rates& r) {
  const auto p = [&](size_t count) { return pct(count, r.seeds); };
  std::printf(
      "%2.0f%% %-9s | %5.1f%% | %5.1f%%  | %5.1f%% %5.1f%% %5.1f%% | "
      "%5.1f%% %5.1f%% %5.1f%% | %5.1f%% | %5.1f%%\n",
      noise * 100, kind == Noise::kLognormal ? "lognormal" : "normal",
      p(r.flat), p(r.outlier), p(r.small.found), p(r.small.near),
      p(r.small.exact), p(r.large.found), p(r.large.near), p(r.large.exact),
      p(r.extra), pct(r.flat_long, r.long_seeds));
}

// The median over 5 repetitions of the time to find the change points of
// `series`, in ms.
double time_ms(const std::vector<std::vector<double>>& series,
               const DetectSettings& settings) {
  std::vector<double> times;
  size_t found = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double start = runner::bench::now_ms();
    for (const std::vector<double>& s : series)
      found += find_change_points(s, settings).size();
    times.push_back(runner::bench::now_ms() - start);
  }
  if (found == 0) std::printf("(no change point found)\n");
  return runner::bench::median(times);
}

// The share of 1000-run series whose noise alternates between 1% and 3%
// every 50 runs (and whose level never changes) that get a change point.
double varying_noise(size_t seeds, const DetectSettings& settings) {
  size_t with_steps = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    runner::bench::Random random(seed);
    std::vector<double> values(1000);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] =
          1000 * std::exp(((i / 50) % 2 ? 0.01 : 0.03) * random.normal());
    with_steps += !find_change_points(values, settings).empty();
  }
  return pct(with_steps, seeds);
}

void print_times(const DetectSettings& settings) {
  std::vector<StepAt> every_100;
  for (size_t run = 100; run < 10000; run += 100)
    every_100.push_back({run, run % 200 == 0 ? -0.05 : 0.05});
  std::vector<std::vector<double>> fifty;
  for (uint64_t seed = 1; seed <= 50; ++seed)
    fifty.push_back(synthetic_series(1000, 0.02, every_100, seed));
  std::printf("50 series x 1000 runs (a 5%% step every 100): %.1f ms\n",
              time_ms(fifty, settings));
  std::printf(
      "1 series x 10000 runs (one 10%% step): %.1f ms\n",
      time_ms({synthetic_series(10000, 0.02, {{5000, 0.1}}, 1)}, settings));
  std::printf("1 series x 10000 runs (a 5%% step every 100): %.1f ms\n",
              time_ms({synthetic_series(10000, 0.02, every_100, 1)}, settings));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t seeds = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
  DetectSettings settings;
  if (argc > 2) settings.penalty = std::strtod(argv[2], nullptr);
  if (argc > 3) settings.max_p_value = std::strtod(argv[3], nullptr);
  if (argc > 4) settings.min_segment = std::strtoul(argv[4], nullptr, 10);
  std::printf("change points, %zu seeds, penalty ", seeds);
  if (settings.penalty > 0)
    std::printf("%.2f", settings.penalty);
  else
    std::printf("3 + 1.5 ln(runs) (9.14 at 60 runs)");
  std::printf(", min_change %.1f%%, max p %.4f, min_segment %zu:\n",
              settings.min_change * 100, settings.max_p_value,
              settings.min_segment);
  std::printf(
      "             |        |         | +3%% at run 20       | +10%% at run "
      "40      |        |\n"
      "noise        | flat   | outlier | found  ±1     exact  | found  ±1  "
      "   exact  | extra  | flat 1000\n");
  for (Noise kind : {Noise::kLognormal, Noise::kNormal})
    for (double noise : {0.01, 0.02, 0.03}) {
      if (kind == Noise::kNormal && noise != 0.02) continue;
      print_row(noise, kind, measure(noise, kind, seeds, settings));
    }
  std::printf(
      "flat 1000-run series, noise 1%% and 3%% by turns every 50 runs: "
      "%.1f%% with a false step (%zu seeds)\n",
      varying_noise(seeds / 5, settings), seeds / 5);
  print_times(settings);
  return 0;
}
