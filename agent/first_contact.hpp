// What a run that never reached the runner tells a user: the program spoke
// no benchmark protocol (it has no CodSpeed integration, the most common
// first mistake: `runner exec` profiles it as one benchmark), or a known
// integration failure (CodSpeed's JavaScript plugins outside a git
// repository) kept it from speaking.
#pragma once

#include <string>
#include <vector>

#include "fifo/fifo.hpp"

namespace runner::agent {

// Nothing reached the runner's FIFO: no command, no integration, no
// benchmark window, not even unparseable bytes.
bool spoke_no_protocol(const fifo::RunData& run);

// The lines (without "runner: ") that explain a run that spoke no protocol:
// `command` is the benchmark's argv, `cwd` where it ran, `exit_code` the
// runner's code for its end (0: it exited 0).
std::vector<std::string> no_protocol_lines(
    const std::vector<std::string>& command, const std::string& cwd,
    int exit_code);

// Whether `dir` or one of its parents holds a .git (a repository's work
// tree, or a worktree's .git file).
bool inside_git_work_tree(const std::string& dir);

// `argv` as one line a POSIX shell reads back as the same words.
std::string shell_command_line(const std::vector<std::string>& argv);

}  // namespace runner::agent
