// SharedDir: a fresh directory that another user (nobody) can reach, for
// tests that run something as that user. The checkout, the build directory
// and $TMPDIR may all sit under a private (0700) parent, so what the other
// user runs is copied here. The directory is made (mkdtemp, then 0755) under
// the first of $TMPDIR, /tmp, /var/tmp, /dev/shm whose every ancestor others
// may search; it is removed with its content when the test ends. When no
// such place exists, path() is empty and why() says so: skip the case.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace runner::testing {

class SharedDir {
 public:
  SharedDir() {
    std::vector<std::string> bases;
    if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp)
      bases.emplace_back(tmp);
    for (const char* b : {"/tmp", "/var/tmp", "/dev/shm"})
      bases.emplace_back(b);
    for (const std::string& base : bases) {
      if (!searchable_by_others(base)) {
        why_ += base + " is not searchable by other users; ";
        continue;
      }
      std::string tmpl = base + "/runner-shared.XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr) {
        why_ += "cannot create a directory in " + base + "; ";
        continue;
      }
      if (::chmod(tmpl.c_str(), 0755) != 0) {
        ::rmdir(tmpl.c_str());
        why_ += "cannot chmod a directory in " + base + "; ";
        continue;
      }
      path_ = tmpl;
      why_.clear();
      return;
    }
    why_ = "no directory another user can reach: " + why_;
  }
  ~SharedDir() {
    std::error_code ec;
    if (!path_.empty() && std::getenv("RUNNER_KEEP_TEST_DIRS") == nullptr)
      std::filesystem::remove_all(path_, ec);
  }
  SharedDir(const SharedDir&) = delete;
  SharedDir& operator=(const SharedDir&) = delete;

  const std::string& path() const { return path_; }
  const std::string& why() const { return why_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

  // Copies an executable here (mode 0755); returns the copy's path, or ""
  // when the copy failed.
  std::string add_executable(const std::string& source) const {
    const std::string target =
        file(std::filesystem::path(source).filename().string());
    std::error_code ec;
    std::filesystem::copy_file(
        source, target, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec || ::chmod(target.c_str(), 0755) != 0) return "";
    return target;
  }

  // A subdirectory owned by uid:gid (mode 0700), where that user writes;
  // "" when it cannot be made.
  std::string add_directory_owned_by(const std::string& name, uid_t uid,
                                     gid_t gid) const {
    const std::string dir = file(name);
    if (::mkdir(dir.c_str(), 0700) != 0 || ::chown(dir.c_str(), uid, gid) != 0)
      return "";
    return dir;
  }

  // Whether every directory from / down to `dir` lets others search it.
  static bool searchable_by_others(const std::string& dir) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::canonical(dir, ec);
    if (ec) return false;
    for (;;) {
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
          (st.st_mode & S_IXOTH) == 0)
        return false;
      if (p == p.root_path()) return true;
      p = p.parent_path();
    }
  }

 private:
  std::string path_;
  std::string why_;
};

}  // namespace runner::testing
