// The exec targets document: the JSON array `runner exec` hands to
// `exec-harness -` on stdin (docs/formats.md, "Exec targets"), and
// the walltime options both command lines and runner.yml set. Written and
// read here only:
//   [{"command": ["sleep", "1"], "name": "optional",
//     "walltime_args": {"warmup_time": null, "max_time": "2s",
//                       "min_time": null, "max_rounds": 5, "min_rounds": null},
//     "working_directory": "/abs"}]
// "name" is omitted when unset; "working_directory" (our extension, for
// runner.yml's working-directory) only when set; "interleave": true (our
// extension: the two benchmarks of the document alternate round by round,
// docs/exec.md) only when set; unset walltime fields are null. Durations are
// strings (format_duration), rounds integers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/quantities.hpp"

namespace runner::format {

// What the user asked of the walltime loop; unset means "the default"
// (exec-harness's make_loop_config applies defaults and checks the
// combination).
struct WalltimeOptions {
  std::optional<Duration> warmup_time, max_time, min_time;
  std::optional<uint64_t> max_rounds, min_rounds;

  // The fields set in `other` replace these (per-benchmark options over the
  // file's defaults).
  void override_with(const WalltimeOptions& other);
  bool operator==(const WalltimeOptions&) const = default;
};

struct ExecTarget {
  std::vector<std::string> command;  // argv, no shell
  std::optional<std::string> name;   // default: the command joined by spaces
  WalltimeOptions walltime;
  std::optional<std::string> working_directory;  // absolute
  // Alternates with the other benchmark of the document, round by round
  // (exec-harness's interleaved mode; both targets carry it).
  bool interleave = false;
  bool operator==(const ExecTarget&) const = default;
};

// Compact JSON, one line (invalid UTF-8 replaced by U+FFFD).
std::string write_exec_targets(std::span<const ExecTarget> targets);
// The reverse; unknown fields are ignored. Errors name the benchmark
// ("benchmark #2: 'command' must be a non-empty array of strings").
base::Result<std::vector<ExecTarget>> read_exec_targets(std::string_view json);

}  // namespace runner::format
