// The language runtimes the tests use when the machine has them (node,
// python3.12, python3.13, java, ...): found in PATH, else under pyenv's
// versions (how CPython 3.12/3.13 come to a Debian 12 machine, whose own
// python3 is 3.11). A candidate counts only when `<it> --version` runs: a
// pyenv shim of a version that is not selected is in PATH but fails.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/base.hpp"

namespace runner::testing {

inline bool runtime_runs(const std::string& program) {
  base::UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  base::SpawnOptions options;
  options.argv = {program, "--version"};
  options.stdout_fd = null.get();
  options.stderr_fd = null.get();
  auto child = base::ChildProcess::spawn(options);
  if (!child) return false;
  auto status = child->wait();
  return status && status->success();
}

// The runtime's path, or "" when the machine has none that runs.
inline std::string find_runtime(const std::string& name) {
  std::vector<std::string> candidates;
  const char* path = std::getenv("PATH");
  if (auto found = base::find_executable(name, path != nullptr ? path : ""))
    candidates.push_back(*found);
  std::vector<std::string> roots;
  if (const char* root = std::getenv("PYENV_ROOT")) roots.push_back(root);
  if (const char* home = std::getenv("HOME"))
    roots.push_back(std::string(home) + "/.pyenv");
  std::error_code ec;
  for (const std::string& root : roots)
    for (const auto& version :
         std::filesystem::directory_iterator(root + "/versions", ec))
      candidates.push_back((version.path() / "bin" / name).string());
  for (const std::string& candidate : candidates)
    if (::access(candidate.c_str(), X_OK) == 0 && runtime_runs(candidate))
      return candidate;
  return {};
}

}  // namespace runner::testing
