// Validation of the walltime results a benchmark wrote into
// <folder>/results/*.json (spec §2.5), and the end-of-run table.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace runner::agent {

struct ResultRow {
  std::string name, uri;
  uint64_t rounds = 0;
  double median_ns = 0, stdev_ns = 0;
};

// Parses every *.json in <folder>/results (non-JSON files are ignored).
// Errors: missing dir, a file that does not parse or lacks the required
// fields, a file with no benchmark (unless allow_empty), nothing at all.
base::Result<std::vector<ResultRow>> load_results(const std::string& folder,
                                                  bool allow_empty);
std::string format_duration_ns(double ns);
// Prints the table or the error; returns the exit code (0 or 1).
int check_results(const std::string& folder, bool allow_empty,
                  std::ostream& out);

}  // namespace runner::agent
