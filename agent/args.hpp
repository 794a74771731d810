// A small command-line parser: long options (--name VALUE, --name=VALUE),
// flags, a few short aliases, `--` ending options, positionals. Unknown
// options are errors with a one-line message.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace runner::agent {

struct OptionSpec {
  std::string name;  // without the leading "--"
  char short_name = 0;
  bool takes_value = false;
  std::string value_name;  // shown in help, e.g. "DIR"
  std::string help;
  bool hidden = false;
};

struct ParsedArgs {
  std::map<std::string, std::vector<std::string>> values;  // name -> values
  std::vector<std::string> positionals;  // before `--` (or all, if allowed)
  std::vector<std::string> command;      // after `--`
  bool has(const std::string& name) const { return values.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
};

struct CommandSpec {
  std::string name;
  std::string usage;    // e.g. "runner run [OPTIONS] -- COMMAND [ARGS...]"
  std::string summary;  // one line
  std::string details;  // free text after the options
  std::vector<OptionSpec> options;
  // When true, the first non-option argument starts the command (like
  // `runner run ./bench args` without `--`).
  bool command_after_positional = false;
  size_t max_positionals = 0;
};

base::Result<ParsedArgs> parse_args(const CommandSpec& spec,
                                    const std::vector<std::string>& args);
std::string format_help(const CommandSpec& spec);

}  // namespace runner::agent
