#include "agent/exec_session.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "agent/session.hpp"
#include "base/base.hpp"
#include "integrations/exec-harness/walltime_loop.hpp"

namespace runner::agent {
namespace {

std::string self_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

base::Result<std::string> find_exec_harness() {
  if (const char* env = std::getenv("RUNNER_EXEC_HARNESS"))
    return std::string(env);
  std::string dir = self_dir();
  for (const std::string& candidate :
       {dir + "/exec-harness",
        dir + "/../integrations/exec-harness/exec-harness"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  const char* path = std::getenv("PATH");
  auto found = base::find_executable("exec-harness", path ? path : "");
  if (found) return found;
  return base::Error(
      "exec-harness not found (looked next to the runner binary and in "
      "PATH; set RUNNER_EXEC_HARNESS)");
}

// Every command must exist and every option be valid before anything runs
// or is written. Returns the exit code when one is not.
std::optional<int> check_targets(const std::vector<ExecTarget>& targets) {
  const char* path = std::getenv("PATH");
  for (const auto& target : targets) {
    if (target.command.empty() || target.command[0].empty()) {
      std::fprintf(stderr, "runner exec: empty command\n");
      return 2;
    }
    exec_harness::WalltimeArgs walltime{
        target.args.warmup_time, target.args.max_time, target.args.min_time,
        target.args.max_rounds, target.args.min_rounds};
    if (auto config = exec_harness::make_loop_config(walltime); !config) {
      std::fprintf(stderr, "runner exec: %s\n",
                   config.error().message().c_str());
      return 2;
    }
    std::string program = target.command[0];
    if (target.working_directory && program.find('/') != std::string::npos &&
        program[0] != '/')
      program = *target.working_directory + "/" + program;
    auto found = base::find_executable(program, path ? path : "");
    if (!found) {
      std::fprintf(stderr, "runner exec: %s\n", found.error().what().c_str());
      return base::spawn_error_exit_code(found.error());
    }
  }
  return std::nullopt;
}

// The targets' JSON in an anonymous temporary file (in $TMPDIR), rewound
// for exec-harness to read as its stdin.
base::Result<base::UniqueFd> targets_input(
    const std::vector<ExecTarget>& targets) {
  auto input = base::create_anonymous_temp_file("runner-exec-targets.");
  if (!input) return std::move(input).error();
  if (auto st = base::write_all(input->get(), exec_targets_json(targets)); !st)
    return std::move(st).error();
  if (::lseek(input->get(), 0, SEEK_SET) != 0)
    return base::Error(std::strerror(errno));
  return std::move(*input);
}

}  // namespace

int run_exec_session(RunOptions options,
                     const std::vector<ExecTarget>& targets) {
  if (auto code = check_targets(targets)) return *code;
  auto harness = find_exec_harness();
  if (!harness) {
    std::fprintf(stderr, "runner exec: %s\n", harness.error().what().c_str());
    return 1;
  }
  auto input = targets_input(targets);
  if (!input) {
    std::fprintf(stderr, "runner exec: targets for exec-harness: %s\n",
                 input.error().what().c_str());
    return 1;
  }
  options.command = {*harness, "-"};
  options.stdin_fd = input->get();
  return run_session(options);
}

}  // namespace runner::agent
