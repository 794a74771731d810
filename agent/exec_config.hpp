// `runner exec` targets: the commands handed to `exec-harness -` as JSON
// (spec codspeed-runner-walltime.md §6.1), either from the command line or
// from a runner.yml / codspeed.yml project file (§1.3). The YAML subset is
// parsed here by a small strict parser (block maps and lists, flow lists and
// maps, quoted scalars, comments); anything else is refused with file:line.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.hpp"

namespace runner::agent {

struct WalltimeArgs {
  std::optional<std::string> warmup_time, max_time, min_time;
  std::optional<uint64_t> max_rounds, min_rounds;
};

struct ExecTarget {
  std::vector<std::string> command;
  std::optional<std::string> name;
  WalltimeArgs args;
  // From the config's working-directory (absolute); exec-harness runs the
  // command there. Serialized as "working_directory" only when set.
  std::optional<std::string> working_directory;
};

// JSON array for `exec-harness -` (spec §6.1 shape; nulls for unset fields,
// name omitted if unset).
std::string exec_targets_json(std::span<const ExecTarget> targets);

// Splits a command string shell-words style: blanks separate words, single
// quotes are literal, double quotes allow \" \\ \$ \` escapes, a backslash
// outside quotes escapes the next character. No expansion of any kind.
base::Result<std::vector<std::string>> split_shell_words(std::string_view text);

// Parses a config document (`path` only names it in errors; relative
// working-directory values are resolved against `base_dir`).
base::Result<std::vector<ExecTarget>> parse_exec_config(
    std::string_view text, const std::string& path,
    const std::string& base_dir);

// Discovers runner.yml, runner.yaml, codspeed.yml, codspeed.yaml,
// .codspeed.yml, .codspeed.yaml in `dir` (first match). std::nullopt when no
// file exists; Error on a bad file with file:line context where possible.
base::Result<std::optional<std::vector<ExecTarget>>> load_exec_config(
    const std::string& dir);

}  // namespace runner::agent
