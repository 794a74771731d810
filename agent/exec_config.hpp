// `runner exec` project files: runner.yml / codspeed.yml (see
// docs/exec.md) read through yaml-cpp into the exec
// targets handed to `exec-harness -` (format/exec_targets.hpp). Any YAML
// document is accepted (block scalars, anchors and aliases, flow
// collections, `<<` merge keys); the schema is checked here:
//   options:            defaults for every benchmark
//     warmup-time / max-time / min-time: DURATION
//     max-rounds / min-rounds: N
//     working-directory: DIR (relative to the file's directory)
//   benchmarks:         non-empty list of
//     - name: NAME      (optional; id: is accepted and ignored)
//       exec: COMMAND   (a string split like a shell would, no expansion,
//                        or a list of words)
//       options: {...}  (overrides the defaults)
// Errors carry file:line:column; unknown keys are warnings.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::agent {

// Nesting deeper than this is refused before the document is built (a
// hostile file must not exhaust the stack); real configs nest about five.
inline constexpr int kMaxConfigNesting = 64;

struct ExecConfig {
  std::vector<format::ExecTarget> targets;
  // "runner.yml:3:5: unknown key 'bench' (...), ignored", for the user.
  std::vector<std::string> warnings;
};

// Splits a command string shell-words style: blanks separate words, single
// quotes are literal, double quotes allow \" \\ \$ \` escapes, a backslash
// outside quotes escapes the next character. No expansion of any kind.
base::Result<std::vector<std::string>> split_shell_words(std::string_view text);

// Parses a config document (`path` only names it in messages; relative
// working-directory values are resolved against `base_dir`).
base::Result<ExecConfig> parse_exec_config(std::string_view text,
                                           const std::string& path,
                                           const std::string& base_dir);

// Discovers runner.yml, runner.yaml, codspeed.yml, codspeed.yaml,
// .codspeed.yml, .codspeed.yaml in `dir` (first match). std::nullopt when no
// file exists; Error on a bad file.
base::Result<std::optional<ExecConfig>> load_exec_config(
    const std::string& dir);

}  // namespace runner::agent
