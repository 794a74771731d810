#include "integrations/results/walltime_results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/base.hpp"

namespace runner::results {
namespace {

// Sums of u64 round times and iteration counts cannot overflow this.
__extension__ typedef unsigned __int128 u128;

// Python `statistics.quantiles(method="exclusive")` for one cut point p on
// sorted data (the convention runner-shared and pytest-codspeed use).
double exclusive_quantile(const std::vector<double>& sorted, double p) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  if (n == 1) return sorted[0];
  if (n == 2) return sorted[0] * (1 - p) + sorted[1] * p;
  const double pos = p * static_cast<double>(n + 1) - 1;
  if (pos <= 0) return sorted[0];
  if (pos >= static_cast<double>(n - 1)) return sorted[n - 1];
  const double lower = std::floor(pos);
  const auto lo = static_cast<size_t>(lower);
  const double frac = pos - lower;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

}  // namespace

BenchmarkStats compute_stats(std::span<const uint64_t> round_ns,
                             std::span<const uint64_t> iters) {
  BenchmarkStats stats;
  const size_t n = round_ns.size();
  if (n == 0) return stats;

  std::vector<double> per_iter;
  per_iter.reserve(n);
  u128 total_ns = 0, total_iters = 0;
  for (size_t i = 0; i < n; ++i) {
    // A missing or zero iteration count means one iteration (never divide
    // by zero on bad input).
    const uint64_t it = (i < iters.size() && iters[i] != 0) ? iters[i] : 1;
    per_iter.push_back(static_cast<double>(round_ns[i] / it));
    total_ns += round_ns[i];
    total_iters += it;
  }
  std::sort(per_iter.begin(), per_iter.end());

  const double count = static_cast<double>(n);
  double sum = 0;
  for (double v : per_iter) sum += v;
  const double mean = sum / count;

  double stdev = 0;
  if (n > 1) {
    double squares = 0;
    for (double v : per_iter) squares += (v - mean) * (v - mean);
    stdev = std::sqrt(squares / (count - 1));
  }

  const double median = (n % 2 == 1)
                            ? per_iter[n / 2]
                            : (per_iter[n / 2 - 1] + per_iter[n / 2]) / 2;
  const double q1 = exclusive_quantile(per_iter, 0.25);
  const double q3 = exclusive_quantile(per_iter, 0.75);
  const double iqr = q3 - q1;
  const double low_fence = q1 - 1.5 * iqr, high_fence = q3 + 1.5 * iqr;

  for (double v : per_iter) {
    if (v < low_fence || v > high_fence) ++stats.iqr_outlier_rounds;
    if (std::fabs(v - mean) > 2 * stdev) ++stats.stdev_outlier_rounds;
  }

  stats.min_ns = per_iter.front();
  stats.max_ns = per_iter.back();
  stats.mean_ns = mean;
  stats.stdev_ns = stdev;
  stats.q1_ns = q1;
  stats.median_ns = median;
  stats.q3_ns = q3;
  stats.rounds = n;
  stats.total_time = static_cast<double>(total_ns) / 1e9;
  stats.iter_per_round = static_cast<uint64_t>(total_iters / n);
  stats.warmup_iters = 0;
  return stats;
}

std::string results_json(const Creator& creator,
                         std::span<const BenchmarkResult> benchmarks) {
  return format::write_walltime_results(creator, benchmarks);
}

std::string results_directory() {
  const char* folder = std::getenv("CODSPEED_PROFILE_FOLDER");
  if (folder != nullptr && *folder != '\0') {
    return format::ProfileLayout(folder).results_dir();
  }
  return format::ProfileLayout("./.codspeed").results_dir();
}

base::Result<std::string> write_results(
    const Creator& creator, std::span<const BenchmarkResult> benchmarks) {
  return write_results(results_directory(), creator, benchmarks);
}

base::Result<std::string> write_results(
    const std::string& dir, const Creator& creator,
    std::span<const BenchmarkResult> benchmarks) {
  std::string json = results_json(creator, benchmarks);
  RUNNER_RETURN_IF_ERROR(base::make_directories(dir),
                         "creating results directory " + dir);
  std::string path =
      dir + "/" + format::ProfileLayout::result_file_name(creator.pid);
  RUNNER_RETURN_IF_ERROR(base::write_file_atomic(path, json),
                         "writing results");
  return path;
}

}  // namespace runner::results
