// The series of a branch's stored runs (see history.hpp).
#include <algorithm>
#include <map>

#include "history/history.hpp"

namespace runner::history {
namespace {

Run run_of(const format::StoreRecord& r) {
  return {r.run_id,          r.commit,     r.created_at,
          r.created_unix_ms, r.ci_run_url, {}};
}

std::string last_part(const std::string& uri) {
  const size_t at = uri.rfind("::");
  return at == std::string::npos ? uri : uri.substr(at + 2);
}

// The point of one benchmark of one run in `metric`, if the record has it.
std::optional<Point> point_of(const format::StoredMedian& m, size_t run,
                              format::Metric metric) {
  switch (metric) {
    case format::Metric::kWall:
      return Point{run, m.median_ns, m.low_ns, m.high_ns};
    case format::Metric::kCpu:
      if (m.cpu_ns) return Point{run, *m.cpu_ns, {}, {}};
      break;
    case format::Metric::kInstructions:
      if (m.instructions) return Point{run, *m.instructions, {}, {}};
      break;
  }
  return std::nullopt;
}

void add_changes(Series& series, const DetectSettings& settings) {
  std::vector<double> values;
  for (const Point& p : series.points) values.push_back(p.value);
  for (const Step& step : find_change_points(values, settings))
    series.changes.push_back({step, {}, {}, {}});
}

}  // namespace

History build_history(std::span<const format::StoreRecord> records,
                      const DetectSettings& settings, format::Metric metric) {
  History history;
  history.metric = std::string(format::metric_name(metric));
  std::map<std::string, Series> by_uri;
  for (const format::StoreRecord& r : records) {
    const size_t run = history.runs.size();
    history.runs.push_back(run_of(r));
    for (const format::StoredMedian& m : r.benchmark_medians)
      if (auto point = point_of(m, run, metric))
        by_uri[m.uri].points.push_back(*point);
  }
  if (!records.empty()) {
    history.owner = records.front().owner;
    history.repository = records.front().repository;
    history.branch = records.front().branch;
  }
  for (auto& [uri, series] : by_uri) {
    series.uri = uri;
    series.name = last_part(uri);
    add_changes(series, settings);
    history.series.push_back(std::move(series));
  }
  return history;
}

}  // namespace runner::history
