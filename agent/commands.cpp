#include "agent/commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "agent/exec_config.hpp"
#include "agent/exec_session.hpp"
#include "agent/session.hpp"
#include "agent/specs.hpp"
#include "base/base.hpp"
#include "profiler/profiler.hpp"
#include "report/report.hpp"

namespace runner::agent {
namespace {

// Parses args; prints help (exit 0) or a one-line error (exit 2).
std::optional<int> parse_or_exit(const CommandSpec& spec,
                                 const std::vector<std::string>& args,
                                 ParsedArgs& out) {
  auto parsed = parse_args(spec, args);
  if (!parsed) {
    std::fprintf(stderr, "%s\n", parsed.error().message().c_str());
    return 2;
  }
  out = std::move(*parsed);
  if (out.has("help")) {
    std::fputs(format_help(spec).c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  if (auto code = parse_or_exit(run_spec(), args, parsed)) return *code;
  RunOptions options;
  if (auto st = parse_profile_options(parsed, options, "run"); !st) {
    std::fprintf(stderr, "%s\n", st.error().message().c_str());
    return 2;
  }
  options.command = parsed.command;
  if (options.command.empty() || options.command[0].empty()) {
    std::fprintf(stderr,
                 "runner run: missing the benchmark command (usage: runner run "
                 "[OPTIONS] -- COMMAND [ARGS...])\n");
    return 2;
  }
  return run_session(options);
}

int exec_command(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  if (auto code = parse_or_exit(exec_spec(), args, parsed)) return *code;
  RunOptions options;
  if (auto st = parse_profile_options(parsed, options, "exec"); !st) {
    std::fprintf(stderr, "%s\n", st.error().message().c_str());
    return 2;
  }

  std::vector<ExecTarget> targets;
  if (!parsed.command.empty()) {
    ExecTarget target;
    target.command = parsed.command;
    target.name = parsed.get("name");
    target.args.warmup_time = parsed.get("warmup-time");
    target.args.max_time = parsed.get("max-time");
    target.args.min_time = parsed.get("min-time");
    for (const char* key : {"max-rounds", "min-rounds"}) {
      auto v = parsed.get(key);
      if (!v) continue;
      char* end = nullptr;
      unsigned long long n = std::strtoull(v->c_str(), &end, 10);
      if (v->empty() || *end != '\0' || (*v)[0] == '-') {
        std::fprintf(stderr,
                     "runner exec: --%s must be a non-negative integer, got "
                     "'%s'\n",
                     key, v->c_str());
        return 2;
      }
      (std::string(key) == "max-rounds" ? target.args.max_rounds
                                        : target.args.min_rounds) = n;
    }
    targets.push_back(std::move(target));
  } else {
    std::error_code ec;
    auto config = load_exec_config(std::filesystem::current_path(ec).string());
    if (!config) {
      std::fprintf(stderr, "runner exec: %s\n", config.error().what().c_str());
      return 2;
    }
    if (!config->has_value()) {
      std::fprintf(stderr,
                   "runner exec: missing the command (usage: runner exec "
                   "[OPTIONS] -- COMMAND [ARGS...], or a runner.yml with "
                   "'benchmarks:')\n");
      return 2;
    }
    targets = std::move(**config);
  }
  return run_exec_session(std::move(options), targets);
}

int report_command(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  if (auto code = parse_or_exit(report_spec(), args, parsed)) return *code;
  report::ReportOptions options;
  if (!parsed.positionals.empty()) {
    options.folder = parsed.positionals[0];
  } else {
    auto newest = report::find_newest_profile_folder(".");
    if (!newest) {
      std::fprintf(stderr, "runner report: %s\n",
                   newest.error().what().c_str());
      return 1;
    }
    options.folder = *newest;
  }
  options.demangle = !parsed.has("no-demangle");
  options.inline_frames = parsed.has("inline");
  if (auto fmt = parsed.get("format")) {
    if (*fmt == "perf-script") {
      options.format = report::ReportOptions::Format::kPerfScript;
    } else if (*fmt == "speedscope") {
      options.format = report::ReportOptions::Format::kSpeedscope;
    } else if (*fmt != "summary") {
      std::fprintf(stderr,
                   "runner report: --format must be summary, perf-script or "
                   "speedscope\n");
      return 2;
    }
  }
  if (auto top = parsed.get("top")) {
    char* end = nullptr;
    long n = std::strtol(top->c_str(), &end, 10);
    if (top->empty() || *end != '\0' || n <= 0 || n > 10000) {
      std::fprintf(stderr, "runner report: --top must be a positive number\n");
      return 2;
    }
    options.top = static_cast<unsigned>(n);
  }
  auto result = report::run_report(options, std::cout, std::cerr);
  if (!result) {
    std::fprintf(stderr, "runner report: %s\n", result.error().what().c_str());
    return 1;
  }
  return result->exit_code;
}

int doctor_command(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  if (auto code = parse_or_exit(doctor_spec(), args, parsed)) return *code;
  profiler::ProbeReport report = profiler::probe_system();
  std::string text = profiler::format_probe_report(report);
  if (!text.empty() && text.back() != '\n') text += '\n';
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace runner::agent
