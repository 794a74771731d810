// The `runner` command line, declared once through CLI11: every subcommand
// and option with its type (enums for --call-graph, --event and --format;
// durations, sizes and frequencies parsed by format/quantities), bound to
// the option structs the commands take. --help and the man page
// (agent/man_page.hpp) are generated from these declarations.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "agent/history_command.hpp"
#include "agent/session.hpp"
#include "agent/upload_command.hpp"
#include "compare/compare.hpp"
#include "format/format.hpp"
#include "report/report.hpp"

#include <CLI/CLI.hpp>

namespace runner::agent {

enum class Command {
  kNone,
  kRun,
  kExec,
  kReport,
  kCompare,
  kUpload,
  kHistory,
  kDoctor
};

// What the command line asked for; the options not given keep their
// defaults.
struct CommandLine {
  Command command = Command::kNone;
  bool man = false;  // runner --man: print the man page
  RunOptions run;    // run and exec (command: run's COMMAND)
  // exec: --name and the walltime options; its command is exec's COMMAND
  // (empty: the benchmarks of runner.yml).
  format::ExecTarget exec;
  report::ReportOptions report;  // folder empty: the newest in "."
  // compare: BASE first in compare.base, then the --base folders (the same
  // for HEAD).
  compare::CompareOptions compare;
  // compare's positionals, merged into `compare` after parsing.
  std::string compare_base, compare_head;
  // compare --store URL (--base: a branch) and its --s3-endpoint.
  std::optional<std::string> compare_store, compare_s3_endpoint;
  // compare --verdict-file (agent/verdict_file.hpp); empty: none.
  std::string compare_verdict_file;
  // upload, and run/exec --upload / --store.
  UploadOptions upload;
  HistoryOptions history;
};

// The application with every subcommand declared and bound to `out`
// (which must outlive it).
std::unique_ptr<CLI::App> make_app(CommandLine& out);

// Parses argv into `out`. Returns the exit code when there is nothing to
// run: 0 after --help/--version (printed on stdout), 2 after a usage error
// (one line on stderr: "runner run: --freq: ... (see 'runner run --help')").
std::optional<int> parse_command_line(int argc, const char* const* argv,
                                      CommandLine& out);

}  // namespace runner::agent
