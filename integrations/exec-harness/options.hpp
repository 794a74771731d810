// CLI11 declarations shared by the `runner` and `exec-harness` command
// lines: options whose values are quantities (parsed once by
// format/quantities, an invalid value is a usage error that says what is
// allowed) and the walltime options of a benchmark (--name, --warmup-time,
// --max-time, --min-time, --max-rounds, --min-rounds), declared here once
// so that both programs spell, type and document them alike.
//
// Header-only on purpose: format/ owns the types (WalltimeOptions,
// ExecTarget) and must not depend on CLI11; this file is the thin binding
// both command lines include (exec-harness's main and agent/), and a
// library of its own would hold nothing but these inline templates.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "format/format.hpp"

#include <CLI/CLI.hpp>

namespace runner::exec_harness {

// An option whose text goes through `parse` (text -> base::Result<T>) into
// `out`. The last occurrence wins, like every option of these commands.
template <typename T, typename Parse>
CLI::Option* add_parsed_option(CLI::App& app, const std::string& flags, T& out,
                               Parse parse, std::string type_name,
                               std::string help) {
  std::string name = flags.substr(flags.rfind(',') + 1);
  CLI::Option* option = app.add_option_function<std::string>(
      flags,
      [&out, parse, name](const std::string& text) {
        auto value = parse(text);
        if (!value) throw CLI::ValidationError(name, value.error().message());
        out = std::move(*value);
      },
      std::move(help));
  option->type_name(std::move(type_name));
  option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return option;
}

inline CLI::Option* add_duration_option(CLI::App& app, const std::string& flags,
                                        std::optional<format::Duration>& out,
                                        std::string help) {
  return add_parsed_option(app, flags, out, format::parse_duration, "DURATION",
                           std::move(help));
}

inline CLI::Option* add_count_option(CLI::App& app, const std::string& flags,
                                     std::optional<uint64_t>& out,
                                     std::string help) {
  auto parse = [](const std::string& text) {
    return format::parse_count(text, "round count");
  };
  return add_parsed_option(app, flags, out, parse, "N", std::move(help));
}

// Usage lines that name what follows the options of a command that takes a
// COMMAND (CLI11's prefix_command), which CLI11 cannot know, plus an
// optional second synopsis line.
class CommandUsageFormatter : public CLI::Formatter {
 public:
  explicit CommandUsageFormatter(std::string extra_line = "")
      : extra_line_(std::move(extra_line)) {}
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    if (!app->get_prefix_command()) return usage;
    if (!usage.empty() && usage.back() == '\n') usage.pop_back();
    usage += " [--] COMMAND [ARGS...]\n";
    if (!extra_line_.empty()) usage += "       " + extra_line_ + "\n";
    return usage;
  }

 private:
  std::string extra_line_;
};

// --name and the walltime options into `target` (its command is the
// caller's: the rest of the command line).
inline void add_benchmark_options(CLI::App& app, format::ExecTarget& target) {
  app.add_option("--name", target.name,
                 "Benchmark name (default: the command joined by spaces)")
      ->type_name("NAME")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  format::WalltimeOptions& w = target.walltime;
  add_duration_option(app, "--warmup-time", w.warmup_time,
                      "Warmup duration, 0 for none (default 1s); a DURATION "
                      "is " +
                          std::string(format::kDurationHelp));
  add_duration_option(app, "--max-time", w.max_time,
                      "Stop measuring after this long, 0 for no limit "
                      "(default 3s when no other limit is given)");
  add_duration_option(app, "--min-time", w.min_time,
                      "Measure at least this long");
  add_count_option(app, "--max-rounds", w.max_rounds,
                   "At most N measured rounds (N >= 1)");
  add_count_option(app, "--min-rounds", w.min_rounds,
                   "At least N measured rounds (N >= 1)");
}

}  // namespace runner::exec_harness
