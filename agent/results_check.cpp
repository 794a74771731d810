#include "agent/results_check.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::agent {
namespace {

constexpr const char* kNoResults =
    "The command did not produce any CodSpeed result to process, did you "
    "run your benchmarks using a compatible CodSpeed integration?";

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
  auto doc = format::read_walltime_results(*text);
  if (!doc)
    return base::Error("invalid results file " + file + ": " +
                       doc.error().message());
  ResultsFiles::File parsed{file, {}};
  for (const format::BenchmarkResult& b : doc->benchmarks)
    parsed.rows.push_back(ResultRow{b.name, b.uri, b.stats.rounds,
                                    b.stats.median_ns, b.stats.stdev_ns});
  return parsed;
}

}  // namespace

ResultsFiles read_results(const std::string& folder) {
  namespace fs = std::filesystem;
  ResultsFiles out;
  out.dir = format::ProfileLayout(folder).results_dir();
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
