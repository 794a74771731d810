// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its
// content when the test ends.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace runner::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr ? base : "/tmp") + "/runner-test.XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    path_ = made != nullptr ? made : "";
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
