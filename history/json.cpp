// history.json: written here only (docs/history.md describes it).
#include "history/json.hpp"

#include <nlohmann/json.hpp>

#include "history/history.hpp"

namespace runner::history {
namespace {

using Json = nlohmann::ordered_json;

Json optional_text(const std::string& text) {
  return text.empty() ? Json(nullptr) : Json(text);
}

Json run_json(const Run& r) {
  Json j;
  j["run_id"] = r.run_id;
  j["commit"] = r.commit;
  j["created_at"] = r.created_at;
  j["created_unix_ms"] = r.created_unix_ms;
  j["ci_run_url"] = optional_text(r.ci_run_url);
  j["report"] = optional_text(r.report_link);
  return j;
}

Json point_json(const Point& p) {
  Json j;
  j["run"] = p.run;
  j["value"] = p.value;
  j["low"] = p.low ? Json(*p.low) : Json(nullptr);
  j["high"] = p.high ? Json(*p.high) : Json(nullptr);
  return j;
}

Json change_json(const Series& s, const Change& c, const History& h) {
  Json j;
  j["point"] = c.step.start;
  const size_t run = s.points.at(c.step.start).run;
  j["run"] = run;
  j["commit"] = h.runs.at(run).commit;
  j["before"] = c.step.before;
  j["after"] = c.step.after;
  j["change"] = c.step.change;
  j["low"] = c.step.low;
  j["high"] = c.step.high;
  j["p_value"] = c.step.p_value;
  j["verdict"] = optional_text(c.verdict);
  j["compare"] = optional_text(c.compare_link);
  j["diff"] = optional_text(c.diff_link);
  return j;
}

Json series_json(const Series& s, const History& h) {
  Json j;
  j["uri"] = s.uri;
  j["name"] = s.name;
  Json points = Json::array(), changes = Json::array();
  for (const Point& p : s.points) points.push_back(point_json(p));
  for (const Change& c : s.changes) changes.push_back(change_json(s, c, h));
  j["points"] = std::move(points);
  j["changes"] = std::move(changes);
  return j;
}

}  // namespace

namespace {

Json document(const History& h) {
  Json j;
  j["version"] = 1;
  j["store"] = h.store;
  j["owner"] = h.owner;
  j["repository"] = h.repository;
  j["branch"] = h.branch;
  j["metric"] = h.metric;
  j["unit"] = h.metric == "instructions" ? "instructions" : "ns";
  j["skipped_records"] = h.skipped_records;
  j["warnings"] = h.warnings;
  Json runs = Json::array(), series = Json::array();
  for (const Run& r : h.runs) runs.push_back(run_json(r));
  for (const Series& s : h.series) series.push_back(series_json(s, h));
  j["runs"] = std::move(runs);
  j["benchmarks"] = std::move(series);
  return j;
}

}  // namespace

std::string write_json(const History& h) {
  return document(h).dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string write_embeddable_json(const History& h) {
  // ASCII only: U+2028/U+2029 (and every other non-ASCII character) as
  // \uXXXX escapes; then '<', which compact JSON holds only inside strings.
  const std::string ascii =
      document(h).dump(-1, ' ', true, Json::error_handler_t::replace);
  std::string out;
  out.reserve(ascii.size());
  for (const char c : ascii) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace runner::history
