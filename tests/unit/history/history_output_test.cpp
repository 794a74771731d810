// The series of stored records in each metric, and the text, markdown and
// JSON made of them: what the store said reaches a terminal or a job
// summary only as plain text.
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "history/history.hpp"

namespace history = runner::history;
namespace format = runner::format;

namespace {

format::StoreRecord record(int run, double wall, std::optional<double> cpu) {
  format::StoreRecord r;
  r.owner = "acme";
  r.repository = "widgets";
  r.branch = "main";
  r.commit = std::string(40, static_cast<char>('a' + run));
  r.run_id = "run" + std::to_string(run);
  r.created_at = "2026-11-2" + std::to_string(run) + "T00:00:00.000Z";
  r.ci_run_url = "https://ci.example/runs/" + std::to_string(run);
  r.benchmark_medians = {{"b.cpp::x", wall, wall * 0.99, wall * 1.01, cpu, {}}};
  return r;
}

}  // namespace

TEST_CASE("a series per benchmark in the metric the records have") {
  std::vector<format::StoreRecord> records;
  for (int run = 0; run < 4; ++run)
    records.push_back(record(run, 1000 + run,
                             run == 1 ? std::nullopt : std::optional(500.0)));
  const auto wall = history::build_history(records, {});
  CHECK(wall.metric == "wall");
  CHECK(wall.runs.size() == 4);
  REQUIRE(wall.series.size() == 1);
  CHECK(wall.series[0].name == "x");
  REQUIRE(wall.series[0].points.size() == 4);
  CHECK(wall.series[0].points[2].value == 1002);
  CHECK(wall.series[0].points[2].low == doctest::Approx(1002 * 0.99));
  const auto cpu = history::build_history(records, {}, format::Metric::kCpu);
  CHECK(cpu.metric == "cpu");
  CHECK(cpu.runs.size() == 4);  // run 1 has no CPU time: no point
  REQUIRE(cpu.series[0].points.size() == 3);
  CHECK(cpu.series[0].points[1].run == 2);
  CHECK(cpu.series[0].points[1].value == 500);
  CHECK_FALSE(cpu.series[0].points[1].low);
  const auto instructions =
      history::build_history(records, {}, format::Metric::kInstructions);
  CHECK(instructions.series.empty());
  const auto json = nlohmann::json::parse(history::write_json(cpu));
  CHECK(json["metric"] == "cpu");
  CHECK(json["benchmarks"][0]["points"][1]["run"] == 2);
  CHECK(json["benchmarks"][0]["points"][1]["low"].is_null());
}

TEST_CASE("what the store said is shown as text, links only when safe") {
  std::vector<format::StoreRecord> records = {record(0, 1000, {}),
                                              record(1, 1000, {})};
  records[0].benchmark_medians[0].uri = "b.cpp::x\x1b[31m|`y";
  records[1].benchmark_medians[0].uri = records[0].benchmark_medians[0].uri;
  auto h = history::build_history(records, {});
  std::ostringstream text, markdown;
  history::write_text(h, text);
  history::write_markdown(h, markdown);
  CHECK(text.str().find('\x1b') == std::string::npos);
  CHECK(markdown.str().find('\x1b') == std::string::npos);
  CHECK(markdown.str().find("| `b.cpp::x?[31m''y` |") != std::string::npos);
  CHECK(markdown.str().find("Newest run: [bbbbbbbbbbbb](https://ci.example/"
                            "runs/1)") != std::string::npos);
  for (const char* url : {"javascript:alert(1)", "https://x/a)(b",
                          "https://x/ a", "//evil.example/x"}) {
    CAPTURE(url);
    h.runs.back().ci_run_url = url;
    std::ostringstream out;
    history::write_markdown(h, out);
    CHECK(out.str().find("Newest run") == std::string::npos);
  }
}
