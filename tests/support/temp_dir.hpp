// TempDir: a fresh directory under $TMPDIR (or /tmp when it is unset or
// empty), removed with its content when the test ends. Throws (failing the
// test case with the reason) when the directory cannot be made.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace runner::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base ? base : "/tmp") +
                       "/runner-test.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot create a test directory " + tmpl + ": " +
                               std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty() && std::getenv("RUNNER_KEEP_TEST_DIRS") == nullptr)
      std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace runner::testing
