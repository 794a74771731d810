#include "format/compare_report.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <utility>

#include <nlohmann/json.hpp>

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
    {CompareTest::kWilcoxonSignedRank, "wilcoxon-signed-rank"}};
constexpr Named<Correction> kCorrections[] = {
    {Correction::kHolm, "holm"},
    {Correction::kBenjaminiHochberg, "benjamini-hochberg"},
    {Correction::kNone, "none"}};
constexpr Named<SampleSource> kSources[] = {{SampleSource::kRounds, "rounds"},
                                            {SampleSource::kMarkers, "markers"},
                                            {SampleSource::kSummary, "summary"},
                                            {SampleSource::kPaired, "paired"}};
constexpr std::array<std::string_view, 2> kSides = {"base", "head"};

// The name of `value` in `table` ("" for a value outside the enum).
template <typename E, size_t N>
std::string_view name_in(const Named<E> (&table)[N], E value) {
  for (const Named<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "";
}

// ---- writing ----------------------------------------------------------------

using Json = nlohmann::ordered_json;  // keeps the schema's member order

// JSON has no NaN or infinity: a non-finite number is written as null.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
Json number(const std::optional<double>& v) {
  return v ? number(*v) : Json(nullptr);
}
Json text_or_null(const std::string& v) {
  return v.empty() ? Json(nullptr) : Json(v);
}

Json side_json(const CompareSide& side) {
  return {{"folders", side.folders},
          {"command", text_or_null(side.command)},
          {"benchmarks", side.benchmarks}};
}

Json settings_json(const CompareSettings& s) {
  return {{"alpha", number(s.alpha)},
          {"threshold", number(s.threshold)},
          {"confidence", number(s.confidence)},
          {"correction", correction_name(s.correction)},
          {"min_rounds", s.min_rounds},
          {"paired", s.paired}};
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

Json side_stats_json(const CompareSideStats& s) {
  return {{"median_ns", number(s.median_ns)},
          {"mean_ns", number(s.mean_ns)},
          {"stdev_ns", number(s.stdev_ns)},
          {"rounds", s.rounds},
          {"folders", s.folders},
          {"source", source_name(s.source)}};
}

Json function_json(const FunctionShareChange& f) {
  return {{"function", f.function},
          {"base_share", number(f.base_share)},
          {"head_share", number(f.head_share)},
          {"change", number(f.head_share - f.base_share)}};
}

Json benchmark_json(const BenchmarkComparison& b) {
  Json functions = Json::array();
  for (const FunctionShareChange& f : b.top_functions)
    functions.push_back(function_json(f));
  return {{"uri", b.uri},
          {"name", b.name},
          {"verdict", verdict_name(b.verdict)},
          {"reason", b.reason},
          {"change", number(b.change)},
          {"ci_low", number(b.ci_low)},
          {"ci_high", number(b.ci_high)},
          {"p_value", number(b.p_value)},
          {"p_value_raw", number(b.p_value_raw)},
          {"test", test_name(b.test)},
          {"base", side_stats_json(b.base)},
          {"head", side_stats_json(b.head)},
          {"top_functions", std::move(functions)},
          {"diff_flamegraph", text_or_null(b.diff_flamegraph)}};
}

Json refs_json(const std::vector<BenchmarkRef>& refs) {
  Json out = Json::array();
  for (const BenchmarkRef& r : refs)
    out.push_back({{"uri", r.uri}, {"name", r.name}});
  return out;
}

Json noise_json(const NoiseEntry& n) {
  Json medians = Json::array();
  for (double m : n.medians_ns) medians.push_back(number(m));
  return {{"side", n.side},
          {"uri", n.uri},
          {"name", n.name},
          {"medians_ns", std::move(medians)},
          {"spread", number(n.spread)}};
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

  void read(const char* key, std::string& out) {
    if (auto* v = get(key, Type::string, "a string"))
      out = v->get<std::string>();
  }
  void read_or_null(const char* key, std::string& out) {
    if (!is_null(key)) read(key, out);
  }
  void read(const char* key, uint64_t& out) {
    if (auto* v = get(key, Type::number_unsigned, "an unsigned integer"))
      out = v->get<uint64_t>();
  }
  void read(const char* key, bool& out) {
    if (auto* v = get(key, Type::boolean, "true or false"))
      out = v->get<bool>();
  }
  void read(const char* key, double& out) {
    auto* v = get(key, Type::number_float, "a number");
    if (v == nullptr) return;
    out = v->get<double>();
    if (!std::isfinite(out))
      problems_.note(path_, std::string(key) + " is not a finite number");
  }
  void read(const char* key, std::optional<double>& out) {
    if (is_null(key)) return;
    double v = 0;
    read(key, v);
    out = v;
  }
  // One of the names of `table`.
  template <typename E, size_t N>
  void read(const char* key, const Named<E> (&table)[N], E& out) {
    if (!get(key, Type::string, "a string")) return;
    std::string text, names;
    read(key, text);
    for (const Named<E>& entry : table) {
      if (entry.name == text) {
        out = entry.value;
        return;
      }
      names += (names.empty() ? "" : ", ") + std::string(entry.name);
    }
    problems_.note(path_,
                   std::string(key) + " '" + text + "' is not one of " + names);
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

CompareSide read_side(Object o) {
  CompareSide side;
  o.each("folders", [&](const nlohmann::json& v, const std::string& path) {
    if (!v.is_string()) return o.problems().note(path, "not a string");
    side.folders.push_back(v.get<std::string>());
  });
  o.read_or_null("command", side.command);
  o.read("benchmarks", side.benchmarks);
  return side;
}

CompareSettings read_settings(Object o) {
  CompareSettings s;
  o.read("alpha", s.alpha);
  o.read("threshold", s.threshold);
  o.read("confidence", s.confidence);
  o.read("correction", kCorrections, s.correction);
  o.read("min_rounds", s.min_rounds);
  o.read("paired", s.paired);
  return s;
}

CompareSideStats read_side_stats(Object o) {
  CompareSideStats s;
  o.read("median_ns", s.median_ns);
  o.read("mean_ns", s.mean_ns);
  o.read("stdev_ns", s.stdev_ns);
  o.read("rounds", s.rounds);
  o.read("folders", s.folders);
  o.read("source", kSources, s.source);
  return s;
}

// "change" is head_share - base_share: recomputed, not read.
FunctionShareChange read_function(Object o) {
  FunctionShareChange f;
  o.read("function", f.function);
  o.read("base_share", f.base_share);
  o.read("head_share", f.head_share);
  return f;
}

BenchmarkComparison read_benchmark(Object o) {
  BenchmarkComparison b;
  o.read("uri", b.uri);
  o.read("name", b.name);
  o.read("verdict", kVerdicts, b.verdict);
  o.read("reason", b.reason);
  o.read("change", b.change);
  o.read("ci_low", b.ci_low);
  o.read("ci_high", b.ci_high);
  o.read("p_value", b.p_value);
  o.read("p_value_raw", b.p_value_raw);
  o.read("test", kTests, b.test);
  b.base = read_side_stats(o.object("base"));
  b.head = read_side_stats(o.object("head"));
  o.each("top_functions", [&](const nlohmann::json& v, const std::string& p) {
    b.top_functions.push_back(read_function(Object(v, p, o.problems())));
  });
  o.read_or_null("diff_flamegraph", b.diff_flamegraph);
  return b;
}

BenchmarkRef read_ref(Object o) {
  BenchmarkRef r;
  o.read("uri", r.uri);
  o.read("name", r.name);
  return r;
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
  r.settings = read_settings(doc.object("settings"));
  Problems& problems = doc.problems();
  doc.each("benchmarks", [&](const nlohmann::json& v, const std::string& p) {
    r.benchmarks.push_back(read_benchmark(Object(v, p, problems)));
  });
  doc.each("added", [&](const nlohmann::json& v, const std::string& p) {
    r.added.push_back(read_ref(Object(v, p, problems)));
  });
  doc.each("removed", [&](const nlohmann::json& v, const std::string& p) {
    r.removed.push_back(read_ref(Object(v, p, problems)));
  });
  doc.each("noise", [&](const nlohmann::json& v, const std::string& p) {
    r.noise.push_back(read_noise(Object(v, p, problems)));
  });
  doc.each("warnings", [&](const nlohmann::json& v, const std::string& p) {
    if (!v.is_string()) return problems.note(p, "not a string");
    r.warnings.push_back(v.get<std::string>());
  });
  return r;
}

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  return name_in(kVerdicts, verdict);
}
std::string_view test_name(CompareTest test) { return name_in(kTests, test); }
std::string_view correction_name(Correction correction) {
  return name_in(kCorrections, correction);
}
std::string_view source_name(SampleSource source) {
  return name_in(kSources, source);
}

std::string write_compare_report(const CompareReport& report) {
  Json benchmarks = Json::array();
  for (const BenchmarkComparison& b : report.benchmarks)
    benchmarks.push_back(benchmark_json(b));
  Json noise = Json::array();
  for (const NoiseEntry& n : report.noise) noise.push_back(noise_json(n));
  Json doc = Json::object();
  doc["base"] = side_json(report.base);
  doc["head"] = side_json(report.head);
  doc["settings"] = settings_json(report.settings);
  doc["summary"] = summary_json(report.benchmarks);
  doc["benchmarks"] = std::move(benchmarks);
  doc["added"] = refs_json(report.added);
  doc["removed"] = refs_json(report.removed);
  doc["noise"] = std::move(noise);
  doc["warnings"] = report.warnings;
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

base::Result<CompareReport> read_compare_report(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return base::Error("compare.json: not JSON");
  Problems problems;
  CompareReport report = read_report(Object(doc, "", problems));
  if (problems.any()) return base::Error(problems.first());
  return report;
}

}  // namespace runner::format
