#include "agent/verdict_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>

#include "agent/commands.hpp"
#include "agent/upload_command.hpp"
#include "base/base.hpp"

namespace runner::agent {
namespace {

int run_compare_line(const CommandLine& line) {
  if (line.compare_store)
    return compare_with_store(line.compare, *line.compare_store,
                              line.compare_s3_endpoint);
  return compare_command(line.compare);
}

int verdict_file_error(const std::string& what) {
  std::fprintf(stderr, "runner compare: --verdict-file: %s\n", what.c_str());
  return 2;
}

}  // namespace

int compare_with_verdict(CommandLine& line) {
  const std::string path = line.compare_verdict_file;
  if (path.empty()) return run_compare_line(line);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return verdict_file_error(
        base::errno_error("cannot remove " + path).what());
  std::optional<format::Verdict> overall;
  line.compare.on_report = [&overall](const format::CompareReport& report) {
    overall = format::overall_verdict(report.benchmarks);
  };
  const int code = run_compare_line(line);
  // Made: 0, 1 (a regression) or 3 (--fail-on-inconclusive).
  if ((code != 0 && code != 1 && code != 3) || !overall) return code;
  const std::string text = std::string(format::verdict_name(*overall)) + "\n";
  if (auto written = base::write_file_atomic(path, text); !written)
    return verdict_file_error(base::write_error(path, written.error()));
  return code;
}

}  // namespace runner::agent
