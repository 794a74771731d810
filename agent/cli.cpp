#include "agent/cli.hpp"

#include <cstdio>
#include <exception>

#include "agent/commands.hpp"
#include "agent/history_command.hpp"
#include "agent/options.hpp"
#include "agent/upload_command.hpp"
#include "agent/verdict_file.hpp"
#include "base/base.hpp"

namespace runner::agent {

int run_main(int argc, char** argv) {
  base::configure_logging_from_env();
  try {
    CommandLine line;
    if (auto code = parse_command_line(argc, argv, line)) return *code;
    switch (line.command) {
      case Command::kRun:
        return run_command(line.run, line.upload);
      case Command::kExec:
        return exec_command(std::move(line.run), line.exec, line.upload);
      case Command::kReport:
        return report_command(std::move(line.report));
      case Command::kCompare:
        return compare_with_verdict(line);
      case Command::kUpload:
        return upload_command(line.upload);
      case Command::kHistory:
        return history_command(line.history);
      case Command::kDoctor:
        return doctor_command(line.run.sampler);
      case Command::kNone:
        break;
    }
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runner: fatal: %s\n", e.what());
    return 1;
  }
}

}  // namespace runner::agent
