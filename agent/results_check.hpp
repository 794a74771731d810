// Validation of the walltime results a benchmark wrote into
// <folder>/results/*.json (docs/formats.md, "Results JSON"), and the end-of-run
// table.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/base.hpp"

namespace runner::agent {

struct ResultRow {
  std::string name, uri;
  uint64_t rounds = 0;
  double median_ns = 0, stdev_ns = 0;
};

// What <folder>/results held, read once: the benchmarks of every *.json
// (other files are ignored) in name order, up to the first file that does not
// parse or lacks the required fields (`error`; reading stops there).
struct ResultsFiles {
  struct File {
    std::string path;
    std::vector<ResultRow> rows;
  };
  std::string dir;
  bool dir_exists = false;
  std::vector<File> files;
  std::optional<base::Error> error;
};
ResultsFiles read_results(const std::string& folder);
// The rows of what was read, or why they are not valid: missing dir, an
// invalid file, a file with no benchmark (unless allow_empty), nothing at all.
base::Result<std::vector<ResultRow>> select_results(const ResultsFiles& files,
                                                    bool allow_empty);
// read_results + select_results.
base::Result<std::vector<ResultRow>> load_results(const std::string& folder,
                                                  bool allow_empty);
std::string format_duration_ns(double ns);
// Prints the table or the error; returns the exit code (0 or 1).
int check_results(const base::Result<std::vector<ResultRow>>& rows,
                  std::ostream& out);

}  // namespace runner::agent
