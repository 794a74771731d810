#include "agent/first_contact.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>

namespace runner::agent {
namespace {

// Words that start or name a JavaScript benchmark (the program, a package
// manager's run, a script file).
bool looks_like_javascript(const std::vector<std::string>& command) {
  constexpr std::array<std::string_view, 10> kPrograms = {
      "node", "nodejs", "npx",    "npm", "pnpm",
      "yarn", "bun",    "vitest", "tsx", "ts-node"};
  constexpr std::array<std::string_view, 6> kScripts = {".js", ".mjs", ".cjs",
                                                        ".ts", ".mts", ".cts"};
  for (const std::string& arg : command) {
    size_t start = 0;
    while (start <= arg.size()) {  // each space-separated word (sh -c "...")
      size_t end = arg.find(' ', start);
      if (end == std::string::npos) end = arg.size();
      std::string_view word(arg.data() + start, end - start);
      std::string_view name = word.substr(word.rfind('/') + 1);
      if (std::find(kPrograms.begin(), kPrograms.end(), name) !=
          kPrograms.end())
        return true;
      for (std::string_view ext : kScripts) {
        if (name.size() > ext.size() && name.ends_with(ext)) return true;
      }
      start = end + 1;
    }
  }
  return false;
}

bool shell_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') ||
         std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
}

}  // namespace

bool spoke_no_protocol(const fifo::RunData& run) {
  const auto& c = run.counters;
  return !run.integration && run.uri_by_ts.empty() && run.markers.empty() &&
         run.bench_pids.empty() && !run.protocol_version && c.commands == 0 &&
         c.malformed_frames == 0 && c.oversized_frames == 0 && c.resyncs == 0 &&
         c.truncated_frames == 0 && c.discarded_bytes == 0;
}

bool inside_git_work_tree(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path = fs::absolute(dir, ec).lexically_normal();
  if (ec) return false;
  for (;;) {
    struct stat st {};
    if (::lstat((path / ".git").c_str(), &st) == 0) return true;
    if (!path.has_relative_path()) return false;  // the root
    path = path.parent_path();
  }
}

std::string shell_command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    if (!arg.empty() && std::all_of(arg.begin(), arg.end(), shell_safe)) {
      line += arg;
      continue;
    }
    line += '\'';
    for (char c : arg)
      line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

std::vector<std::string> no_protocol_lines(
    const std::vector<std::string>& command, const std::string& cwd,
    int exit_code) {
  if (exit_code != 0 && looks_like_javascript(command) &&
      !inside_git_work_tree(cwd)) {
    return {(command.empty() ? "the command" : command[0]) +
                " spoke no benchmark protocol, and " + cwd +
                " is not inside a git repository",
            "CodSpeed's JavaScript plugins need a git repository: run inside "
            "one (git init)"};
  }
  const std::string program = command.empty() ? "the command" : command[0];
  return {program +
              " spoke no benchmark protocol (no CodSpeed integration): "
              "nothing was measured",
          "to profile it as one benchmark: runner exec -- " +
              shell_command_line(command)};
}

}  // namespace runner::agent
