#include "agent/commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "agent/command_runtime.hpp"
#include "agent/exec_config.hpp"
#include "agent/session.hpp"
#include "base/base.hpp"
#include "integrations/exec-harness/exec_harness.hpp"
#include "profiler/profiler.hpp"
#include "report/report.hpp"

namespace runner::agent {
namespace {

// A usage error found after parsing: one line, exit 2.
int usage_error(const char* command, const std::string& message) {
  std::fprintf(stderr, "runner %s: %s\n", command, message.c_str());
  return 2;
}

// The sampler options that only make sense together (e.g. --mmap-size a
// power-of-two number of pages) are checked before anything runs.
std::optional<int> check_profile_options(const RunOptions& options,
                                         const char* command) {
  if (!options.profile) return std::nullopt;
  auto valid = profiler::validate_options(options.sampler);
  if (!valid) return usage_error(command, valid.error().message());
  return std::nullopt;
}

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

constexpr const char* kInterleaveUsage =
    "usage: runner exec --interleave [OPTIONS] -- COMMAND_A [ARGS...] ::: "
    "COMMAND_B [ARGS...]";

// --interleave: the command line's COMMAND_A ::: COMMAND_B, two targets
// with the same options.
std::optional<int> split_interleaved(const format::ExecTarget& target,
                                     std::vector<format::ExecTarget>& out) {
  const auto& words = target.command;
  const auto separators = std::count(words.begin(), words.end(), ":::");
  if (separators != 1)
    return usage_error(
        "exec", std::string("--interleave takes two commands separated by "
                            "':::' (") +
                    (separators == 0 ? "got one" : "got more than two") + "; " +
                    kInterleaveUsage + ")");
  const auto middle = std::find(words.begin(), words.end(), ":::");
  out = {target, target};
  out[0].command.assign(words.begin(), middle);
  out[1].command.assign(middle + 1, words.end());
  if (out[0].command.empty() || out[1].command.empty())
    return usage_error("exec",
                       std::string("--interleave: a command is empty (") +
                           kInterleaveUsage + ")");
  return std::nullopt;
}

// The benchmarks of `runner exec`: the command line's, else runner.yml's
// (with --interleave, every one marked: two are needed).
std::optional<int> exec_targets(const format::ExecTarget& target,
                                std::vector<format::ExecTarget>& out) {
  if (!target.command.empty() && target.interleave)
    return split_interleaved(target, out);
  if (!target.command.empty()) {
    out = {target};
    return std::nullopt;
  }
  std::error_code ec;
  auto config = load_exec_config(std::filesystem::current_path(ec).string());
  if (!config) return usage_error("exec", config.error().what());
  if (!config->has_value())
    return usage_error("exec",
                       "missing the command (usage: runner exec [OPTIONS] -- "
                       "COMMAND [ARGS...], or a runner.yml with "
                       "'benchmarks:')");
  for (const std::string& warning : (*config)->warnings)
    std::fprintf(stderr, "runner exec: warning: %s\n", warning.c_str());
  out = std::move((*config)->targets);
  for (auto& t : out) t.interleave = t.interleave || target.interleave;
  return std::nullopt;
}

// Every command must exist and every option be valid before anything runs
// or is written.
std::optional<int> check_exec_targets(
    std::vector<format::ExecTarget>& targets) {
  if (auto interleaved = exec_harness::prepare_interleaved(targets);
      !interleaved)
    return usage_error("exec", interleaved.error().message());
  const char* path = std::getenv("PATH");
  for (const auto& target : targets) {
    if (target.command.empty() || target.command[0].empty())
      return usage_error("exec", "empty command");
    if (auto config = exec_harness::make_loop_config(target.walltime); !config)
      return usage_error("exec", config.error().message());
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

// The stack size for the targets' commands (a relative path taken from
// the target's working directory, as exec-harness runs it).
void choose_exec_stack_size(RunOptions& options,
                            const std::vector<format::ExecTarget>& targets) {
  std::vector<std::vector<std::string>> commands;
  for (const auto& target : targets) {
    commands.push_back(target.command);
    std::string& program = commands.back()[0];
    if (target.working_directory && program.find('/') != std::string::npos &&
        program[0] != '/')
      program = *target.working_directory + "/" + program;
  }
  const char* path = std::getenv("PATH");
  choose_stack_size(options, commands, path ? path : "");
}

// The targets go to `exec-harness -` on stdin (docs/formats.md, "Exec
// targets"), from an anonymous temporary file (in $TMPDIR).
base::Result<base::UniqueFd> exec_targets_input(
    const std::vector<format::ExecTarget>& targets) {
  RUNNER_ASSIGN_OR_RETURN(
      base::UniqueFd input,
      base::create_anonymous_temp_file("runner-exec-targets."),
      "targets for exec-harness");
  RUNNER_RETURN_IF_ERROR(
      base::write_all(input.get(), format::write_exec_targets(targets)),
      "targets for exec-harness");
  if (::lseek(input.get(), 0, SEEK_SET) != 0)
    return base::errno_error("targets for exec-harness: lseek");
  return input;
}

}  // namespace

namespace {

// The session, then the upload when one was asked for: a failed upload
// after a successful benchmark is kUploadFailedExit.
int run_and_upload(RunOptions& options, const UploadOptions& upload) {
  if (upload.requested() && options.profile_folder.empty())
    options.profile_folder = default_profile_folder();
  const int code = run_session(options);
  if (!upload.requested()) return code;
  std::error_code ec;  // removed: the run produced nothing to upload
  if (!std::filesystem::exists(options.profile_folder, ec)) return code;
  const int uploaded = upload_after_run(upload, options.profile_folder);
  return code != 0 ? code : uploaded;
}

}  // namespace

int run_command(RunOptions options, const UploadOptions& upload) {
  if (options.command.empty() || options.command[0].empty())
    return usage_error("run",
                       "missing the benchmark command (usage: runner run "
                       "[OPTIONS] -- COMMAND [ARGS...])");
  if (auto code = check_profile_options(options, "run")) return *code;
  const char* path = std::getenv("PATH");
  choose_stack_size(options, {options.command}, path ? path : "");
  return run_and_upload(options, upload);
}

int exec_command(RunOptions options, const format::ExecTarget& target,
                 const UploadOptions& upload) {
  if (auto code = check_profile_options(options, "exec")) return *code;
  std::vector<format::ExecTarget> targets;
  if (auto code = exec_targets(target, targets)) return *code;
  if (auto code = check_exec_targets(targets)) return *code;
  choose_exec_stack_size(options, targets);
  auto harness = find_exec_harness();
  if (!harness) {
    std::fprintf(stderr, "runner exec: %s\n", harness.error().what().c_str());
    return 1;
  }
  auto input = exec_targets_input(targets);
  if (!input) {
    std::fprintf(stderr, "runner exec: %s\n", input.error().what().c_str());
    return 1;
  }
  options.command = {*harness, "-"};
  options.stdin_fd = input->get();
  return run_and_upload(options, upload);
}

int report_command(report::ReportOptions options) {
  if (options.folder.empty()) {
    auto newest = report::find_newest_profile_folder(".");
    if (!newest) {
      std::fprintf(stderr, "runner report: %s\n",
                   newest.error().what().c_str());
      return 1;
    }
    options.folder = *newest;
  }
  auto result = report::run_report(options, std::cout, std::cerr);
  if (!result) {
    std::fprintf(stderr, "runner report: %s\n", result.error().what().c_str());
    return 1;
  }
  return result->exit_code;
}

int compare_command(const compare::CompareOptions& options) {
  return compare::run_compare(options, std::cout, std::cerr);
}

int doctor_command(const profiler::SamplerOptions& sampler) {
  if (auto st = profiler::validate_options(sampler); !st)
    return usage_error("doctor", st.error().message());
  profiler::ProbeReport report = profiler::probe_system();
  std::string text = profiler::format_probe_report(report);
  if (!text.empty() && text.back() != '\n') text += '\n';
  const profiler::MachineLimits limits = profiler::machine_limits();
  text += profiler::format_capacity(
      profiler::estimate_capacity(sampler, limits), sampler, limits);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace runner::agent
