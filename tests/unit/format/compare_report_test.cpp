// compare.json: the written layout, the round trip, and malformed documents
// rejected with the member named.
#include <cmath>
#include <limits>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "format/format.hpp"
#include "tests/support/compare_sample.hpp"

using namespace runner::format;
using runner::testing::sample_compare_report;

namespace {

// The error reading `text`, "(accepted)" when there is none.
std::string error_of(std::string_view text) {
  auto read = read_compare_report(text);
  return read ? "(accepted)" : read.error().message();
}

// The sample written, with `edit` applied to its parsed document.
template <typename Edit>
std::string edited(Edit&& edit) {
  auto doc = nlohmann::ordered_json::parse(
      write_compare_report(sample_compare_report()));
  edit(doc);
  return doc.dump();
}

std::vector<std::string> keys(const nlohmann::ordered_json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  return out;
}

}  // namespace

TEST_CASE("compare.json: names of the enums") {
  CHECK(verdict_name(Verdict::kRegression) == "regression");
  CHECK(verdict_name(Verdict::kImprovement) == "improvement");
  CHECK(verdict_name(Verdict::kUnchanged) == "unchanged");
  CHECK(verdict_name(Verdict::kInconclusive) == "inconclusive");
  CHECK(test_name(CompareTest::kNone) == "none");
  CHECK(test_name(CompareTest::kMannWhitneyU) == "mann-whitney-u");
  CHECK(test_name(CompareTest::kWelchT) == "welch-t");
  CHECK(test_name(CompareTest::kWilcoxonSignedRank) == "wilcoxon-signed-rank");
  CHECK(test_name(CompareTest::kMedianQuartiles) == "median-quartiles");
  CHECK(correction_name(Correction::kHolm) == "holm");
  CHECK(correction_name(Correction::kBenjaminiHochberg) ==
        "benjamini-hochberg");
  CHECK(correction_name(Correction::kNone) == "none");
  CHECK(source_name(SampleSource::kRounds) == "rounds");
  CHECK(source_name(SampleSource::kMarkers) == "markers");
  CHECK(source_name(SampleSource::kSummary) == "summary");
  CHECK(source_name(SampleSource::kPaired) == "paired");
}

TEST_CASE("compare.json: members in the documented order, null when absent") {
  const std::string text = write_compare_report(sample_compare_report());
  // The overall verdict first, on the second line, for shell scripts.
  CHECK(
      text.starts_with("{\n  \"verdict\": \"regression\",\n  \"base\": {\n    "
                       "\"folders\": [\n"));
  CHECK(text.ends_with("}\n"));
  const auto doc = nlohmann::ordered_json::parse(text);
  using V = std::vector<std::string>;
  CHECK(keys(doc) == V{"verdict", "base", "head", "settings", "summary",
                       "benchmarks", "added", "removed", "noise", "history",
                       "warnings"});
  CHECK(keys(doc["head"]) == V{"folders", "command", "benchmarks"});
  CHECK(doc["head"]["command"].is_null());
  CHECK(keys(doc["settings"]) == V{"alpha", "threshold", "confidence",
                                   "correction", "min_rounds", "paired",
                                   "metric"});
  CHECK(doc["settings"]["metric"] == "wall");
  CHECK(doc["settings"]["correction"] == "holm");
  CHECK(doc["summary"] == nlohmann::ordered_json{{"regressions", 1},
                                                 {"improvements", 1},
                                                 {"unchanged", 2},
                                                 {"inconclusive", 1}});
  const auto& first = doc["benchmarks"][0];
  CHECK(keys(first) == V{"uri", "name", "verdict", "reason", "change", "ci_low",
                         "ci_high", "p_value", "p_value_raw", "test",
                         "detectable_change", "noise", "runs", "base", "head",
                         "top_functions", "diff_flamegraph"});
  CHECK(first["noise"] == "runs");
  CHECK(keys(first["runs"]) == V{"base_runs", "head_runs", "history_runs",
                                 "log_stdev", "change", "ci_low", "ci_high",
                                 "p_value"});
  CHECK(doc["benchmarks"][1]["noise"] == "not-estimated");
  CHECK(doc["benchmarks"][1]["runs"].is_null());
  CHECK(doc["benchmarks"][3]["noise"] == "history");
  CHECK(doc["benchmarks"][3]["runs"]["history_runs"] == 10);
  CHECK(keys(first["base"]) == V{"median_ns", "q1_ns", "mean_ns", "stdev_ns",
                                 "rounds", "folders", "source"});
  CHECK(keys(first["top_functions"][0]) ==
        V{"function", "base_share", "head_share", "change"});
  CHECK(first["top_functions"][0]["change"].get<double>() ==
        doctest::Approx(0.105));
  CHECK(first["verdict"] == "regression");
  CHECK(first["test"] == "mann-whitney-u");
  CHECK(first["detectable_change"].get<double>() == doctest::Approx(0.0547));
  // Long names are never shortened in the JSON.
  CHECK(doc["benchmarks"][3]["name"].get<std::string>().size() > 60);
  const auto& inconclusive = doc["benchmarks"][4];
  for (const char* key :
       {"change", "ci_low", "ci_high", "p_value", "p_value_raw",
        "detectable_change", "diff_flamegraph"})
    CHECK_MESSAGE(inconclusive[key].is_null(), key);
  CHECK(doc["benchmarks"][1]["base"]["median_ns"].is_null());
  CHECK(keys(doc["added"][0]) == V{"uri", "name"});
  CHECK(keys(doc["noise"][0]) ==
        V{"side", "uri", "name", "medians_ns", "spread"});
}

TEST_CASE("compare.json: round trip") {
  const CompareReport sample = sample_compare_report();
  auto read = read_compare_report(write_compare_report(sample));
  REQUIRE_MESSAGE(read, read.error().message());
  CHECK(*read == sample);

  CompareReport paired;
  paired.base.command = "./bench --old";
  paired.head.command = "./bench --new";
  paired.settings.paired = true;
  paired.settings.correction = Correction::kBenjaminiHochberg;
  paired.settings.min_rounds = 9;
  paired.benchmarks.push_back({});
  paired.benchmarks[0].test = CompareTest::kWilcoxonSignedRank;
  paired.benchmarks[0].base.source = SampleSource::kPaired;
  auto again = read_compare_report(write_compare_report(paired));
  REQUIRE_MESSAGE(again, again.error().message());
  CHECK(*again == paired);

  auto empty = read_compare_report(write_compare_report({}));
  REQUIRE(empty);
  CHECK(*empty == CompareReport{});
}

TEST_CASE("compare.json: hostile values are written, never thrown") {
  CompareReport r = sample_compare_report();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.benchmarks[0].change = nan;
  r.benchmarks[0].ci_high = std::numeric_limits<double>::infinity();
  r.benchmarks[0].name = "bad \xFF\xC3 utf-8";
  r.warnings.push_back("\xE2\x82");
  std::string text;
  CHECK_NOTHROW(text = write_compare_report(r));
  const auto doc = nlohmann::json::parse(text);
  CHECK(doc["benchmarks"][0]["change"].is_null());
  CHECK(doc["benchmarks"][0]["ci_high"].is_null());
  CHECK(doc["benchmarks"][0]["name"] == "bad \xEF\xBF\xBD\xEF\xBF\xBD utf-8");
  auto read = read_compare_report(text);
  REQUIRE(read);
  CHECK_FALSE(read->benchmarks[0].change);
  // A required number that is not finite is written as null: the document
  // then says so when read.
  r = sample_compare_report();
  r.noise[0].spread = nan;
  CHECK(error_of(write_compare_report(r)) ==
        "compare.json: noise[0]: spread is not a number");
}

TEST_CASE("compare.json: malformed documents name the member") {
  CHECK(error_of("") == "compare.json: not JSON (at byte 1)");
  CHECK(error_of("{\"base\": ") == "compare.json: not JSON (at byte 10)");
  CHECK(error_of("[]") == "compare.json: not an object");
  CHECK(error_of("{}") == "compare.json: base is missing");
  CHECK(error_of(
            edited([](auto& d) { d["benchmarks"][2]["verdict"] = "worse"; })) ==
        "compare.json: benchmarks[2]: verdict 'worse' is not one of "
        "regression, improvement, unchanged, inconclusive");
  CHECK(error_of(edited([](auto& d) { d["benchmarks"][0]["test"] = "t"; })) ==
        "compare.json: benchmarks[0]: test 't' is not one of none, "
        "mann-whitney-u, welch-t, wilcoxon-signed-rank, median-quartiles");
  CHECK(error_of(edited([](auto& d) { d["settings"]["correction"] = 1; })) ==
        "compare.json: settings: correction is not a string");
  CHECK(error_of(edited(
            [](auto& d) { d["benchmarks"][1]["head"]["source"] = "guess"; })) ==
        "compare.json: benchmarks[1].head: source 'guess' is not one "
        "of rounds, markers, summary, paired, runs");
  CHECK(error_of(edited([](auto& d) {
          d["benchmarks"][1]["head"].erase("rounds");
        })) == "compare.json: benchmarks[1].head: rounds is missing");
  CHECK(error_of(edited(
            [](auto& d) { d["benchmarks"][0]["base"]["rounds"] = -3; })) ==
        "compare.json: benchmarks[0].base: rounds is not an unsigned integer");
  CHECK(error_of(edited(
            [](auto& d) { d["benchmarks"][0]["base"]["rounds"] = 3.5; })) ==
        "compare.json: benchmarks[0].base: rounds is not an unsigned integer");
  CHECK(error_of(edited([](auto& d) {
          d["benchmarks"][0]["change"] = "10%";
        })) == "compare.json: benchmarks[0]: change is not a number");
  CHECK(error_of(edited([](auto& d) { d["benchmarks"][0]["base"] = 7; })) ==
        "compare.json: benchmarks[0]: base is not an object");
  CHECK(error_of(edited([](auto& d) { d["benchmarks"][3] = "x"; })) ==
        "compare.json: benchmarks[3]: not an object");
  CHECK(error_of(edited([](auto& d) {
          d["benchmarks"][0]["top_functions"][1].erase("head_share");
        })) ==
        "compare.json: benchmarks[0].top_functions[1]: head_share is "
        "missing");
  CHECK(
      error_of(edited([](auto& d) { d["benchmarks"][0]["noise"] = "loud"; })) ==
      "compare.json: benchmarks[0]: noise 'loud' is not one of "
      "rounds, runs, history, not-estimated");
  CHECK(error_of(edited([](auto& d) {
          d["benchmarks"][0]["runs"].erase("log_stdev");
        })) == "compare.json: benchmarks[0].runs: log_stdev is missing");
  CHECK(error_of(edited([](auto& d) { d["added"][0]["uri"] = nullptr; })) ==
        "compare.json: added[0]: uri is not a string");
  CHECK(error_of(edited([](auto& d) { d["noise"][1]["side"] = "middle"; })) ==
        "compare.json: noise[1]: side 'middle' is not one of base, head");
  CHECK(error_of(edited([](auto& d) {
          d["noise"][0]["medians_ns"][1] = "x";
        })) == "compare.json: noise[0].medians_ns[1]: not a finite number");
  CHECK(error_of(edited([](auto& d) { d["warnings"] = "one"; })) ==
        "compare.json: warnings is not an array");
  CHECK(error_of(edited([](auto& d) { d["warnings"][0] = 5; })) ==
        "compare.json: warnings[0]: not a string");
  CHECK(error_of(edited([](auto& d) { d["head"]["folders"][0] = 5; })) ==
        "compare.json: head.folders[0]: not a string");
  CHECK(error_of(edited([](auto& d) { d["settings"]["paired"] = 0; })) ==
        "compare.json: settings: paired is not true or false");
  // A number a double cannot hold (the parser rejects it).
  std::string huge = write_compare_report(sample_compare_report());
  const std::string alpha = "\"alpha\": 0.05";
  huge.replace(huge.find(alpha), alpha.size(), "\"alpha\": 1e999");
  CHECK(error_of(huge).starts_with("compare.json: not JSON (at byte "));
}

TEST_CASE("compare.json: the overall verdict, as compare's exit code") {
  using V = Verdict;
  auto overall = [](std::vector<V> verdicts) {
    std::vector<BenchmarkComparison> benchmarks;
    for (V v : verdicts) {
      benchmarks.emplace_back();
      benchmarks.back().verdict = v;
    }
    return overall_verdict(benchmarks);
  };
  CHECK(overall({}) == V::kInconclusive);
  CHECK(overall({V::kInconclusive}) == V::kInconclusive);
  // Unchanged only when every benchmark is: an inconclusive one could have
  // moved either way.
  CHECK(overall({V::kInconclusive, V::kUnchanged}) == V::kInconclusive);
  CHECK(overall({V::kImprovement, V::kInconclusive}) == V::kInconclusive);
  CHECK(overall({V::kUnchanged, V::kUnchanged}) == V::kUnchanged);
  CHECK(overall({V::kUnchanged, V::kImprovement}) == V::kImprovement);
  CHECK(overall({V::kInconclusive, V::kRegression}) == V::kRegression);
  CHECK(overall({V::kImprovement, V::kRegression, V::kUnchanged}) ==
        V::kRegression);
  for (const auto& [verdicts, line] :
       {std::pair{std::vector<V>{}, "inconclusive"},
        std::pair{std::vector<V>{V::kUnchanged, V::kImprovement},
                  "improvement"}}) {
    CompareReport r;
    for (V v : verdicts) {
      r.benchmarks.emplace_back();
      r.benchmarks.back().verdict = v;
    }
    CHECK(write_compare_report(r).starts_with("{\n  \"verdict\": \"" +
                                              std::string(line) + "\",\n"));
  }
  // Read back, it must be the benchmarks' own.
  CHECK(error_of(edited([](auto& d) { d.erase("verdict"); })) ==
        "compare.json: verdict is missing");
  CHECK(error_of(edited([](auto& d) { d["verdict"] = "fine"; })) ==
        "compare.json: verdict 'fine' is not one of regression, improvement, "
        "unchanged, inconclusive");
  CHECK(error_of(edited([](auto& d) { d["verdict"] = "unchanged"; })) ==
        "compare.json: verdict 'unchanged' is not the benchmarks' overall "
        "verdict 'regression'");
}

TEST_CASE("compare.json: summary is recomputed; unknown members ignored") {
  auto read = read_compare_report(edited([](auto& d) {
    d.erase("summary");
    d["later"] = {1, 2};
    d["benchmarks"][0]["extra"] = true;
    d["benchmarks"][0]["top_functions"][0]["change"] = 42;
  }));
  REQUIRE_MESSAGE(read, read.error().message());
  CHECK(*read == sample_compare_report());
}
