#include "format/compare_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "format/json_checker.hpp"

namespace runner::format {
namespace {

// Each enum's values with their names in the document, in the order the
// errors list them.
template <typename E>
struct Named {
  E value;
  std::string_view name;
};
constexpr Named<Verdict> kVerdicts[] = {
    {Verdict::kRegression, "regression"},
    {Verdict::kImprovement, "improvement"},
    {Verdict::kUnchanged, "unchanged"},
    {Verdict::kInconclusive, "inconclusive"}};
constexpr Named<CompareTest> kTests[] = {
    {CompareTest::kNone, "none"},
    {CompareTest::kMannWhitneyU, "mann-whitney-u"},
    {CompareTest::kWelchT, "welch-t"},
    {CompareTest::kWilcoxonSignedRank, "wilcoxon-signed-rank"},
    {CompareTest::kMedianQuartiles, "median-quartiles"}};
constexpr Named<Metric> kMetrics[] = {{Metric::kWall, "wall"},
                                      {Metric::kCpu, "cpu"},
                                      {Metric::kInstructions, "instructions"}};
constexpr Named<Correction> kCorrections[] = {
    {Correction::kHolm, "holm"},
    {Correction::kBenjaminiHochberg, "benjamini-hochberg"},
    {Correction::kNone, "none"}};
constexpr Named<SampleSource> kSources[] = {{SampleSource::kRounds, "rounds"},
                                            {SampleSource::kMarkers, "markers"},
                                            {SampleSource::kSummary, "summary"},
                                            {SampleSource::kPaired, "paired"},
                                            {SampleSource::kRuns, "runs"}};
constexpr Named<NoiseSource> kNoiseSources[] = {
    {NoiseSource::kRounds, "rounds"},
    {NoiseSource::kRuns, "runs"},
    {NoiseSource::kHistory, "history"},
    {NoiseSource::kNotEstimated, "not-estimated"}};
constexpr std::array<std::string_view, 2> kSides = {"base", "head"};

// The name of `value` in `table` ("" for a value outside the enum).
template <typename E, size_t N>
std::string_view name_in(const Named<E> (&table)[N], E value) {
  for (const Named<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "";
}

// names_of(value): the table of the value's enum.
constexpr const auto& names_of(Verdict) { return kVerdicts; }
constexpr const auto& names_of(CompareTest) { return kTests; }
constexpr const auto& names_of(Correction) { return kCorrections; }
constexpr const auto& names_of(Metric) { return kMetrics; }
constexpr const auto& names_of(SampleSource) { return kSources; }
constexpr const auto& names_of(NoiseSource) { return kNoiseSources; }

// A member of an object of type S: its key and field, written and read
// through the same table (each table lists the members in the document's
// order). A string that may be null is "" in the field.
template <typename S, typename T>
struct Member {
  const char* key;
  T S::*field;
  bool nullable;
};
template <typename S, typename T>
constexpr Member<S, T> member(const char* key, T S::*field,
                              bool nullable = false) {
  return {key, field, nullable};
}

constexpr auto kSideMembers =
    std::tuple{member("command", &CompareSide::command, true),
               member("benchmarks", &CompareSide::benchmarks)};
constexpr auto kSettingsMembers =
    std::tuple{member("alpha", &CompareSettings::alpha),
               member("threshold", &CompareSettings::threshold),
               member("confidence", &CompareSettings::confidence),
               member("correction", &CompareSettings::correction),
               member("min_rounds", &CompareSettings::min_rounds),
               member("paired", &CompareSettings::paired),
               member("metric", &CompareSettings::metric)};
constexpr auto kSideStatsMembers =
    std::tuple{member("median_ns", &CompareSideStats::median_ns),
               member("q1_ns", &CompareSideStats::q1_ns),
               member("mean_ns", &CompareSideStats::mean_ns),
               member("stdev_ns", &CompareSideStats::stdev_ns),
               member("rounds", &CompareSideStats::rounds),
               member("folders", &CompareSideStats::folders),
               member("source", &CompareSideStats::source)};
// "change" (head_share - base_share) follows: written, not read.
constexpr auto kFunctionMembers =
    std::tuple{member("function", &FunctionShareChange::function),
               member("base_share", &FunctionShareChange::base_share),
               member("head_share", &FunctionShareChange::head_share)};
// Then "base", "head", "top_functions", "diff_flamegraph".
constexpr auto kBenchmarkMembers = std::tuple{
    member("uri", &BenchmarkComparison::uri),
    member("name", &BenchmarkComparison::name),
    member("verdict", &BenchmarkComparison::verdict),
    member("reason", &BenchmarkComparison::reason),
    member("change", &BenchmarkComparison::change),
    member("ci_low", &BenchmarkComparison::ci_low),
    member("ci_high", &BenchmarkComparison::ci_high),
    member("p_value", &BenchmarkComparison::p_value),
    member("p_value_raw", &BenchmarkComparison::p_value_raw),
    member("test", &BenchmarkComparison::test),
    member("detectable_change", &BenchmarkComparison::detectable_change),
    member("noise", &BenchmarkComparison::noise)};
// "runs": null, or this object.
constexpr auto kRunLevelMembers =
    std::tuple{member("base_runs", &RunLevelStats::base_runs),
               member("head_runs", &RunLevelStats::head_runs),
               member("history_runs", &RunLevelStats::history_runs),
               member("log_stdev", &RunLevelStats::log_stdev),
               member("change", &RunLevelStats::change),
               member("ci_low", &RunLevelStats::ci_low),
               member("ci_high", &RunLevelStats::ci_high),
               member("p_value", &RunLevelStats::p_value)};
constexpr auto kRefMembers = std::tuple{member("uri", &BenchmarkRef::uri),
                                        member("name", &BenchmarkRef::name)};

// ---- writing ----------------------------------------------------------------

using Json = nlohmann::ordered_json;  // keeps the schema's member order

// JSON has no NaN or infinity: a non-finite number is written as null.
Json value_json(double v, bool) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}
Json value_json(const std::optional<double>& v, bool) {
  return v ? value_json(*v, false) : Json(nullptr);
}
Json value_json(uint64_t v, bool) { return v; }
Json value_json(bool v, bool) { return v; }
Json value_json(const std::string& v, bool nullable) {
  return nullable && v.empty() ? Json(nullptr) : Json(v);
}
template <typename E>
requires std::is_enum_v<E> Json value_json(E v, bool) {
  return name_in(names_of(v), v);
}

// `out` (an object) with the members of `table` added from `s`.
template <typename S, typename Table>
Json members_json(const S& s, const Table& table, Json out = Json::object()) {
  std::apply(
      [&](const auto&... m) {
        ((out[m.key] = value_json(s.*m.field, m.nullable)), ...);
      },
      table);
  return out;
}

// The elements of `list` as an array, each written by `to_json`.
template <typename T, typename ToJson>
Json array_json(const std::vector<T>& list, ToJson&& to_json) {
  Json out = Json::array();
  for (const T& element : list) out.push_back(to_json(element));
  return out;
}

Json side_json(const CompareSide& side) {
  Json out = Json::object();
  out["folders"] = side.folders;
  return members_json(side, kSideMembers, std::move(out));
}

Json summary_json(const std::vector<BenchmarkComparison>& benchmarks) {
  Json out = Json::object();
  for (const auto& [verdict, name] : kVerdicts) {
    uint64_t count = 0;
    for (const BenchmarkComparison& b : benchmarks)
      count += b.verdict == verdict;
    // "regression" -> "regressions", "unchanged" and "inconclusive" stay.
    std::string key(name);
    if (verdict == Verdict::kRegression || verdict == Verdict::kImprovement)
      key += 's';
    out[key] = count;
  }
  return out;
}

Json function_json(const FunctionShareChange& f) {
  Json out = members_json(f, kFunctionMembers);
  out["change"] = value_json(f.head_share - f.base_share, false);
  return out;
}

Json benchmark_json(const BenchmarkComparison& b) {
  Json out = members_json(b, kBenchmarkMembers);
  out["runs"] = b.runs ? members_json(*b.runs, kRunLevelMembers) : Json();
  out["base"] = members_json(b.base, kSideStatsMembers);
  out["head"] = members_json(b.head, kSideStatsMembers);
  out["top_functions"] = array_json(b.top_functions, function_json);
  out["diff_flamegraph"] = value_json(b.diff_flamegraph, true);
  return out;
}

Json noise_json(const NoiseEntry& n) {
  Json out = Json::object();
  out["side"] = n.side;
  out["uri"] = n.uri;
  out["name"] = n.name;
  out["medians_ns"] =
      array_json(n.medians_ns, [](double m) { return value_json(m, false); });
  out["spread"] = value_json(n.spread, false);
  return out;
}

// ---- reading ----------------------------------------------------------------

using Type = nlohmann::json::value_t;

// The first problem met while reading, "compare.json: <where>: <what>";
// reading goes on after it (every getter leaves its default), and the
// document is rejected at the end.
class Problems {
 public:
  void note(const std::string& where, const std::string& what) {
    if (!first_.empty()) return;
    first_ = "compare.json: ";
    if (!where.empty()) first_ += where + ": ";
    first_ += what;
  }
  bool any() const { return !first_.empty(); }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// One JSON object of the document and its path ("benchmarks[2].base"), read
// member by member; a missing or mistyped member is noted, named.
class Object {
 public:
  Object(const nlohmann::json& value, std::string path, Problems& problems)
      : value_(value), path_(std::move(path)), problems_(problems) {
    if (!value_.is_object()) problems_.note(path_, "not an object");
  }

  const std::string& path() const { return path_; }
  std::string child(const char* key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  // The member, or nullptr (noted) when absent or not of `type`.
  const nlohmann::json* get(const char* key, Type type, const char* what) {
    if (!value_.is_object()) return nullptr;
    auto it = value_.find(key);
    if (it == value_.end()) {
      problems_.note(path_, std::string(key) + " is missing");
      return nullptr;
    }
    const bool number = type == Type::number_float && it->is_number();
    if (it->type() != type && !number) {
      problems_.note(path_, std::string(key) + " is not " + what);
      return nullptr;
    }
    return &*it;
  }
  bool is_null(const char* key) const {
    if (!value_.is_object()) return false;
    auto it = value_.find(key);
    return it != value_.end() && it->is_null();
  }

  // The member `key` into `out`; a nullable string may be null ("").
  void read(const char* key, std::string& out, bool nullable = false) {
    if (nullable && is_null(key)) return;
    if (auto* v = get(key, Type::string, "a string"))
      out = v->get<std::string>();
  }
  void read(const char* key, uint64_t& out, bool = false) {
    if (auto* v = get(key, Type::number_unsigned, "an unsigned integer"))
      out = v->get<uint64_t>();
  }
  void read(const char* key, bool& out, bool = false) {
    if (auto* v = get(key, Type::boolean, "true or false"))
      out = v->get<bool>();
  }
  void read(const char* key, double& out, bool = false) {
    auto* v = get(key, Type::number_float, "a number");
    if (v == nullptr) return;
    out = v->get<double>();
    if (!std::isfinite(out))
      problems_.note(path_, std::string(key) + " is not a finite number");
  }
  void read(const char* key, std::optional<double>& out, bool = false) {
    if (is_null(key)) return;
    double v = 0;
    read(key, v);
    out = v;
  }
  // One of the names of the enum's table.
  template <typename E>
  requires std::is_enum_v<E>
  void read(const char* key, E& out, bool = false) {
    if (!get(key, Type::string, "a string")) return;
    std::string text, names;
    read(key, text);
    for (const Named<E>& entry : names_of(out)) {
      if (entry.name == text) {
        out = entry.value;
        return;
      }
      names += (names.empty() ? "" : ", ") + std::string(entry.name);
    }
    problems_.note(path_,
                   std::string(key) + " '" + text + "' is not one of " + names);
  }
  // The members of `table` into `out`.
  template <typename S, typename Table>
  void read_members(S& out, const Table& table) {
    std::apply(
        [&](const auto&... m) { (read(m.key, out.*m.field, m.nullable), ...); },
        table);
  }
  // Calls each(element, "key[i]") for the elements of the array `key`.
  template <typename Each>
  void each(const char* key, Each&& each) {
    auto* list = get(key, Type::array, "an array");
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size() && !problems_.any(); ++i)
      each((*list)[i], child(key) + "[" + std::to_string(i) + "]");
  }
  Object object(const char* key) {
    static const nlohmann::json kNone;
    const nlohmann::json* v = get(key, Type::object, "an object");
    return Object(v ? *v : kNone, child(key), problems_, v != nullptr);
  }

  Problems& problems() { return problems_; }

 private:
  // An object already noted as missing: nothing more is noted about it.
  Object(const nlohmann::json& value, std::string path, Problems& problems,
         bool present)
      : value_(value), path_(std::move(path)), problems_(problems) {
    if (present && !value_.is_object()) problems_.note(path_, "not an object");
  }

  const nlohmann::json& value_;
  std::string path_;
  Problems& problems_;
};

// The array of strings `key` of `o` into `out`.
void read_strings(Object& o, const char* key, std::vector<std::string>& out) {
  o.each(key, [&](const nlohmann::json& v, const std::string& path) {
    if (!v.is_string()) return o.problems().note(path, "not a string");
    out.push_back(v.get<std::string>());
  });
}

// The objects of the array `key` of `o`, each read by `read_one`.
template <typename T, typename ReadOne>
void read_objects(Object& o, const char* key, std::vector<T>& out,
                  ReadOne&& read_one) {
  o.each(key, [&](const nlohmann::json& v, const std::string& path) {
    out.push_back(read_one(Object(v, path, o.problems())));
  });
}

// An object that is only the members of `table`.
template <typename S, typename Table>
S read_plain(Object o, const Table& table) {
  S out;
  o.read_members(out, table);
  return out;
}

CompareSide read_side(Object o) {
  CompareSide side;
  read_strings(o, "folders", side.folders);
  o.read_members(side, kSideMembers);
  return side;
}

BenchmarkComparison read_benchmark(Object o) {
  BenchmarkComparison b;
  o.read_members(b, kBenchmarkMembers);
  if (!o.is_null("runs"))
    b.runs = read_plain<RunLevelStats>(o.object("runs"), kRunLevelMembers);
  b.base = read_plain<CompareSideStats>(o.object("base"), kSideStatsMembers);
  b.head = read_plain<CompareSideStats>(o.object("head"), kSideStatsMembers);
  read_objects(o, "top_functions", b.top_functions, [](Object f) {
    return read_plain<FunctionShareChange>(f, kFunctionMembers);
  });
  o.read("diff_flamegraph", b.diff_flamegraph, true);
  return b;
}

NoiseEntry read_noise(Object o) {
  NoiseEntry n;
  o.read("side", n.side);
  if (o.get("side", Type::string, "a string") && n.side != kSides[0] &&
      n.side != kSides[1])
    o.problems().note(o.path(),
                      "side '" + n.side + "' is not one of base, head");
  o.read("uri", n.uri);
  o.read("name", n.name);
  o.each("medians_ns", [&](const nlohmann::json& v, const std::string& path) {
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      return o.problems().note(path, "not a finite number");
    n.medians_ns.push_back(v.get<double>());
  });
  o.read("spread", n.spread);
  return n;
}

CompareReport read_report(Object doc) {
  CompareReport r;
  r.base = read_side(doc.object("base"));
  r.head = read_side(doc.object("head"));
  r.settings =
      read_plain<CompareSettings>(doc.object("settings"), kSettingsMembers);
  read_objects(doc, "benchmarks", r.benchmarks, read_benchmark);
  const auto read_ref = [](Object o) {
    return read_plain<BenchmarkRef>(o, kRefMembers);
  };
  read_objects(doc, "added", r.added, read_ref);
  read_objects(doc, "removed", r.removed, read_ref);
  read_objects(doc, "noise", r.noise, read_noise);
  doc.read("history", r.history, true);
  read_strings(doc, "warnings", r.warnings);
  Verdict verdict = Verdict::kInconclusive;
  doc.read("verdict", verdict);
  if (const Verdict overall = overall_verdict(r.benchmarks); verdict != overall)
    doc.problems().note("", "verdict '" + std::string(verdict_name(verdict)) +
                                "' is not the benchmarks' overall verdict '" +
                                std::string(verdict_name(overall)) + "'");
  return r;
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  return name_in(kVerdicts, verdict);
}
std::string_view test_name(CompareTest test) { return name_in(kTests, test); }
std::string_view metric_name(Metric metric) {
  return name_in(kMetrics, metric);
}
std::string_view correction_name(Correction correction) {
  return name_in(kCorrections, correction);
}
std::string_view source_name(SampleSource source) {
  return name_in(kSources, source);
}
std::string_view noise_source_name(NoiseSource source) {
  return name_in(kNoiseSources, source);
}

Verdict overall_verdict(const std::vector<BenchmarkComparison>& benchmarks) {
  const auto any = [&](Verdict v) {
    return std::any_of(
        benchmarks.begin(), benchmarks.end(),
        [v](const BenchmarkComparison& b) { return b.verdict == v; });
  };
  if (any(Verdict::kRegression)) return Verdict::kRegression;
  if (benchmarks.empty() || any(Verdict::kInconclusive))
    return Verdict::kInconclusive;
  if (any(Verdict::kImprovement)) return Verdict::kImprovement;
  return Verdict::kUnchanged;
}

std::string write_compare_report(const CompareReport& report) {
  Json doc = Json::object();
  doc["verdict"] = verdict_name(overall_verdict(report.benchmarks));
  doc["base"] = side_json(report.base);
  doc["head"] = side_json(report.head);
  doc["settings"] = members_json(report.settings, kSettingsMembers);
  doc["summary"] = summary_json(report.benchmarks);
  doc["benchmarks"] = array_json(report.benchmarks, benchmark_json);
  const auto ref_json = [](const BenchmarkRef& r) {
    return members_json(r, kRefMembers);
  };
  doc["added"] = array_json(report.added, ref_json);
  doc["removed"] = array_json(report.removed, ref_json);
  doc["noise"] = array_json(report.noise, noise_json);
  doc["history"] = value_json(report.history, true);
  doc["warnings"] = report.warnings;
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

base::Result<CompareReport> read_compare_report(std::string_view text) {
  auto doc =
      parse_json_document<nlohmann::json>(text, /*replace_invalid_utf8=*/true);
  if (!doc) return std::move(doc).error().context("compare.json");
  Problems problems;
  CompareReport report = read_report(Object(*doc, "", problems));
  if (problems.any()) return base::Error(problems.first());
  return report;
}

}  // namespace runner::format
