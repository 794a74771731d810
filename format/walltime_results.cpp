#include "format/walltime_results.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "format/json_checker.hpp"

namespace runner::format {
namespace {

using Json = nlohmann::ordered_json;  // keeps the schema's field order

Json optional_number(const std::optional<double>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json config_json(const BenchmarkConfig& c) {
  return {{"warmup_time_ns", optional_number(c.warmup_time_ns)},
          {"min_round_time_ns", optional_number(c.min_round_time_ns)},
          {"max_time_ns", optional_number(c.max_time_ns)},
          {"max_rounds", c.max_rounds ? Json(*c.max_rounds) : Json(nullptr)}};
}

Json stats_json(const BenchmarkStats& s) {
  return {{"min_ns", s.min_ns},
          {"max_ns", s.max_ns},
          {"mean_ns", s.mean_ns},
          {"stdev_ns", s.stdev_ns},
          {"q1_ns", s.q1_ns},
          {"median_ns", s.median_ns},
          {"q3_ns", s.q3_ns},
          {"rounds", s.rounds},
          {"total_time", s.total_time},
          {"iqr_outlier_rounds", s.iqr_outlier_rounds},
          {"stdev_outlier_rounds", s.stdev_outlier_rounds},
          {"iter_per_round", s.iter_per_round},
          {"warmup_iters", s.warmup_iters}};
}

constexpr const char* kDoubleStats[] = {"min_ns",   "max_ns",    "mean_ns",
                                        "stdev_ns", "q1_ns",     "median_ns",
                                        "q3_ns",    "total_time"};
constexpr const char* kCountStats[] = {"rounds", "iqr_outlier_rounds",
                                       "stdev_outlier_rounds", "iter_per_round",
                                       "warmup_iters"};

constexpr const char* kRoundArrays[] = {"times_per_round_ns",
                                        "iters_per_round"};

// The optional raw rounds: both arrays of unsigned integers, or neither; of
// equal length; no round of zero iterations (a per-iteration time divides
// by it).
base::Status check_rounds(const nlohmann::json& b) {
  const bool has_times = b.contains(kRoundArrays[0]);
  const bool has_iters = b.contains(kRoundArrays[1]);
  if (has_times != has_iters)
    return base::Error(std::string("benchmark with '") +
                       kRoundArrays[has_times ? 0 : 1] + "' but without '" +
                       kRoundArrays[has_times ? 1 : 0] + "'");
  if (!has_times) return {};
  for (const char* key : kRoundArrays) {
    const auto& array = b[key];
    if (!array.is_array() ||
        !std::all_of(array.begin(), array.end(),
                     [](const auto& v) { return v.is_number_unsigned(); }))
      return base::Error(std::string("benchmark's '") + key +
                         "' is not an array of unsigned integers");
  }
  if (b[kRoundArrays[0]].size() != b[kRoundArrays[1]].size())
    return base::Error(
        "benchmark's 'times_per_round_ns' and 'iters_per_round' differ in "
        "length");
  for (const auto& v : b[kRoundArrays[1]])
    if (v.get<uint64_t>() == 0)
      return base::Error(
          "benchmark's 'iters_per_round' has a round of 0 "
          "iterations");
  return {};
}

base::Status check_benchmark(const nlohmann::json& b) {
  if (!b.is_object()) return base::Error("a benchmark is not an object");
  for (const char* key : {"name", "uri"})
    if (!b.contains(key) || !b[key].is_string())
      return base::Error(std::string("benchmark without string '") + key + "'");
  if (!b.contains("config") || !b["config"].is_object())
    return base::Error("benchmark without 'config' object");
  if (!b.contains("stats") || !b["stats"].is_object())
    return base::Error("benchmark without 'stats' object");
  const auto& s = b["stats"];
  for (const char* key : kDoubleStats)
    if (!s.contains(key) || !s[key].is_number())
      return base::Error(std::string("stats without number '") + key + "'");
  for (const char* key : kCountStats)
    if (!s.contains(key) || !s[key].is_number_unsigned())
      return base::Error(std::string("stats without unsigned '") + key + "'");
  return check_rounds(b);
}

std::optional<double> optional_double(const nlohmann::json& object,
                                      const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// A benchmark check_benchmark accepted.
BenchmarkResult read_benchmark(const nlohmann::json& b) {
  BenchmarkResult r;
  r.name = b["name"].get<std::string>();
  r.uri = b["uri"].get<std::string>();
  const auto& c = b["config"];
  r.config.warmup_time_ns = optional_double(c, "warmup_time_ns");
  r.config.min_round_time_ns = optional_double(c, "min_round_time_ns");
  r.config.max_time_ns = optional_double(c, "max_time_ns");
  if (auto it = c.find("max_rounds"); it != c.end() && it->is_number_unsigned())
    r.config.max_rounds = it->get<uint64_t>();
  const auto& s = b["stats"];
  BenchmarkStats& st = r.stats;
  double* doubles[] = {&st.min_ns, &st.max_ns,    &st.mean_ns, &st.stdev_ns,
                       &st.q1_ns,  &st.median_ns, &st.q3_ns,   &st.total_time};
  for (size_t i = 0; i < std::size(kDoubleStats); ++i)
    *doubles[i] = s[kDoubleStats[i]].get<double>();
  uint64_t* counts[] = {&st.rounds, &st.iqr_outlier_rounds,
                        &st.stdev_outlier_rounds, &st.iter_per_round,
                        &st.warmup_iters};
  for (size_t i = 0; i < std::size(kCountStats); ++i)
    *counts[i] = s[kCountStats[i]].get<uint64_t>();
  if (b.contains(kRoundArrays[0])) {
    r.times_per_round_ns = b[kRoundArrays[0]].get<std::vector<uint64_t>>();
    r.iters_per_round = b[kRoundArrays[1]].get<std::vector<uint64_t>>();
  }
  return r;
}

void read_header(const nlohmann::json& doc, WalltimeResults& out) {
  const auto& creator = doc["creator"];
  if (creator.is_object()) {
    if (auto it = creator.find("name"); it != creator.end() && it->is_string())
      out.creator.name = it->get<std::string>();
    if (auto it = creator.find("version");
        it != creator.end() && it->is_string())
      out.creator.version = it->get<std::string>();
    if (auto it = creator.find("pid");
        it != creator.end() && it->is_number_unsigned())
      out.creator.pid = static_cast<uint32_t>(it->get<uint64_t>());
  }
  const auto& instrument = doc["instrument"];
  out.instrument.clear();
  if (instrument.is_object())
    if (auto it = instrument.find("type");
        it != instrument.end() && it->is_string())
      out.instrument = it->get<std::string>();
}

}  // namespace

std::string write_walltime_results(
    const Creator& creator, std::span<const BenchmarkResult> benchmarks) {
  Json doc;
  doc["creator"] = {{"name", creator.name},
                    {"version", creator.version},
                    {"pid", creator.pid}};
  doc["instrument"] = {{"type", "walltime"}};
  Json list = Json::array();
  for (const BenchmarkResult& b : benchmarks) {
    Json entry;
    entry["name"] = b.name;
    entry["uri"] = b.uri;
    entry["config"] = config_json(b.config);
    entry["stats"] = stats_json(b.stats);
    if (!b.times_per_round_ns.empty() || !b.iters_per_round.empty()) {
      entry[kRoundArrays[0]] = b.times_per_round_ns;
      entry[kRoundArrays[1]] = b.iters_per_round;
    }
    list.push_back(std::move(entry));
  }
  doc["benchmarks"] = std::move(list);
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

base::Result<WalltimeResults> read_walltime_results(std::string_view text) {
  // Invalid UTF-8 in a name is read as U+FFFD: one odd byte does not make
  // the whole file unreadable.
  auto parsed =
      parse_json_document<nlohmann::json>(text, /*replace_invalid_utf8=*/true);
  if (!parsed) return std::move(parsed).error();
  const nlohmann::json& doc = *parsed;
  if (!doc.is_object() || !doc.contains("benchmarks") ||
      !doc["benchmarks"].is_array() || !doc.contains("creator") ||
      !doc.contains("instrument"))
    return base::Error("missing creator/instrument/benchmarks");
  WalltimeResults out;
  read_header(doc, out);
  for (const auto& b : doc["benchmarks"]) {
    if (auto st = check_benchmark(b); !st) return std::move(st.error());
    out.benchmarks.push_back(read_benchmark(b));
  }
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

namespace {

// The 95% interval of the median of `times` (sorted in place).
std::pair<double, double> median_interval(std::vector<double>& times) {
  std::sort(times.begin(), times.end());
  const double n = static_cast<double>(times.size());
  const double half = 1.96 * std::sqrt(n) / 2;
  const auto rank = [&](double r) {
    return static_cast<size_t>(std::clamp(r, 1.0, n)) - 1;
  };
  return {times[rank(std::floor(n / 2 - half))],
          times[rank(std::ceil(n / 2 + half + 1))]};
}

}  // namespace

std::vector<IterationMedian> per_iteration_medians(
    std::span<const BenchmarkResult> results) {
  std::map<std::string, std::vector<const BenchmarkResult*>> by_uri;
  for (const BenchmarkResult& r : results) by_uri[r.uri].push_back(&r);
  std::vector<IterationMedian> out;
  for (const auto& [uri, entries] : by_uri) {
    std::vector<double> times, medians;
    bool rounds = true;
    for (const BenchmarkResult* r : entries) {
      rounds = rounds && !r->times_per_round_ns.empty() &&
               r->times_per_round_ns.size() == r->iters_per_round.size();
      medians.push_back(r->stats.median_ns);
      for (size_t i = 0; rounds && i < r->times_per_round_ns.size(); ++i)
        if (r->iters_per_round[i] > 0)
          times.push_back(static_cast<double>(r->times_per_round_ns[i]) /
                          static_cast<double>(r->iters_per_round[i]));
    }
    IterationMedian m{uri, median_of(rounds ? times : medians), {}, {}};
    if (rounds && times.size() >= kMinRoundsForInterval) {
      const auto [low, high] = median_interval(times);
      m.low_ns = low;
      m.high_ns = high;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::pair<std::string, double>> median_per_iteration_ns(
    std::span<const BenchmarkResult> results) {
  std::vector<std::pair<std::string, double>> out;
  for (IterationMedian& m : per_iteration_medians(results))
    out.emplace_back(std::move(m.uri), m.median_ns);
  return out;
}

}  // namespace runner::format
