#include "agent/results_check.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/base.hpp"

namespace runner::agent {
namespace {

constexpr const char* kNoResults =
    "The command did not produce any CodSpeed result to process, did you "
    "run your benchmarks using a compatible CodSpeed integration?";

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
  for (const char* key : {"min_ns", "max_ns", "mean_ns", "stdev_ns", "q1_ns",
                          "median_ns", "q3_ns", "total_time"})
    if (!s.contains(key) || !s[key].is_number())
      return base::Error(std::string("stats without number '") + key + "'");
  for (const char* key :
       {"rounds", "iqr_outlier_rounds", "stdev_outlier_rounds",
        "iter_per_round", "warmup_iters"})
    if (!s.contains(key) || !s[key].is_number_unsigned())
      return base::Error(std::string("stats without unsigned '") + key + "'");
  return {};
}

}  // namespace

std::string format_duration_ns(double ns) {
  char buf[64];
  if (ns < 1e3)
    std::snprintf(buf, sizeof(buf), "%.1f ns", ns);
  else if (ns < 1e6)
    std::snprintf(buf, sizeof(buf), "%.2f us", ns / 1e3);
  else if (ns < 1e9)
    std::snprintf(buf, sizeof(buf), "%.2f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof(buf), "%.3f s", ns / 1e9);
  return buf;
}

namespace {

// The benchmarks of one results file, or why it is not valid.
base::Result<ResultsFiles::File> read_results_file(const std::string& file) {
  auto text = base::read_file(file);
  if (!text) return std::move(text.error());
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded())
    return base::Error("invalid results file " + file + ": not JSON");
  if (!doc.is_object() || !doc.contains("benchmarks") ||
      !doc["benchmarks"].is_array() || !doc.contains("creator") ||
      !doc.contains("instrument"))
    return base::Error("invalid results file " + file +
                       ": missing creator/instrument/benchmarks");
  ResultsFiles::File parsed{file, {}};
  for (const auto& b : doc["benchmarks"]) {
    if (auto st = check_benchmark(b); !st)
      return base::Error("invalid results file " + file + ": " +
                         st.error().message());
    ResultRow row;
    row.name = b["name"].get<std::string>();
    row.uri = b["uri"].get<std::string>();
    row.rounds = b["stats"]["rounds"].get<uint64_t>();
    row.median_ns = b["stats"]["median_ns"].get<double>();
    row.stdev_ns = b["stats"]["stdev_ns"].get<double>();
    parsed.rows.push_back(std::move(row));
  }
  return parsed;
}

}  // namespace

ResultsFiles read_results(const std::string& folder) {
  namespace fs = std::filesystem;
  ResultsFiles out;
  out.dir = folder + "/results";
  std::error_code ec;
  out.dir_exists = fs::is_directory(out.dir, ec);
  if (!out.dir_exists) return out;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(out.dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto parsed = read_results_file(file);
    if (!parsed) {
      out.error = std::move(parsed.error());
      break;
    }
    out.files.push_back(std::move(*parsed));
  }
  return out;
}

base::Result<std::vector<ResultRow>> select_results(const ResultsFiles& files,
                                                    bool allow_empty) {
  if (!files.dir_exists) {
    if (allow_empty) return std::vector<ResultRow>();
    return base::Error(std::string(kNoResults) + " (no " + files.dir + ")");
  }
  std::vector<ResultRow> rows;
  for (const auto& file : files.files) {
    if (file.rows.empty() && !allow_empty)
      return base::Error("results file " + file.path + " has no benchmark. " +
                         kNoResults);
    rows.insert(rows.end(), file.rows.begin(), file.rows.end());
  }
  if (files.error) return *files.error;
  if (rows.empty() && !allow_empty) return base::Error(kNoResults);
  return rows;
}

base::Result<std::vector<ResultRow>> load_results(const std::string& folder,
                                                  bool allow_empty) {
  return select_results(read_results(folder), allow_empty);
}

int check_results(const base::Result<std::vector<ResultRow>>& rows,
                  std::ostream& out) {
  if (!rows) {
    out << "runner: error: " << rows.error().what() << "\n";
    return 1;
  }
  if (rows->empty()) return 0;
  size_t width = 9;
  for (const auto& r : *rows) width = std::max(width, r.name.size());
  width = std::min<size_t>(width, 60);
  char line[512];
  std::snprintf(line, sizeof(line), "\n%-*s %8s %14s %14s\n",
                static_cast<int>(width), "Benchmark", "Rounds", "Median",
                "Stdev");
  out << line;
  for (const auto& r : *rows) {
    std::string name =
        r.name.size() > width ? r.name.substr(0, width - 1) + "~" : r.name;
    std::snprintf(line, sizeof(line), "%-*s %8llu %14s %14s\n",
                  static_cast<int>(width), name.c_str(),
                  static_cast<unsigned long long>(r.rounds),
                  format_duration_ns(r.median_ns).c_str(),
                  format_duration_ns(r.stdev_ns).c_str());
    out << line;
  }
  out << "\n";
  return 0;
}

}  // namespace runner::agent
