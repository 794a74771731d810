// base/cache_folder: a private cache folder (0700, ours, never through a
// symlink), entry sizes, removal that never follows a symlink, and eviction
// of the least recently used entries down to a cap.
#include "base/cache_folder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using runner::testing::TempDir;
namespace base = runner::base;

namespace {

void write(const std::string& path, size_t bytes) {
  fs::create_directories(fs::path(path).parent_path());
  REQUIRE(base::write_file_atomic(path, std::string(bytes, 'x')));
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Sets the entry's mtime to `seconds` after the epoch.
void set_used(const std::string& path, time_t seconds) {
  const struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

}  // namespace

TEST_CASE("open_cache_folder: created 0700, tightened, never a symlink") {
  TempDir dir;
  const mode_t old_umask = ::umask(022);
  auto fd = base::open_cache_folder(dir.file("a/b/cache"));
  ::umask(old_umask);
  REQUIRE_MESSAGE(fd, fd.error().what());
  CHECK(mode_of(dir.file("a/b/cache")) == 0700);

  fs::create_directories(dir.file("open"));
  REQUIRE(::chmod(dir.file("open").c_str(), 0755) == 0);
  REQUIRE(base::open_cache_folder(dir.file("open")));
  CHECK(mode_of(dir.file("open")) == 0700);

  fs::create_directories(dir.file("elsewhere"));
  REQUIRE(::chmod(dir.file("elsewhere").c_str(), 0755) == 0);
  fs::create_directory_symlink(dir.file("elsewhere"), dir.file("link"));
  auto linked = base::open_cache_folder(dir.file("link"));
  REQUIRE_FALSE(linked);
  CHECK(linked.error().what().find("is a symbolic link") != std::string::npos);
  CHECK(mode_of(dir.file("elsewhere")) == 0755);

  write(dir.file("file"), 1);
  CHECK_FALSE(base::open_cache_folder(dir.file("file")));

  if (::geteuid() != 0) RUNNER_SKIP_CASE("chown to another user needs root");
  fs::create_directories(dir.file("theirs"));
  REQUIRE(::chown(dir.file("theirs").c_str(), 65534, 65534) == 0);
  auto theirs = base::open_cache_folder(dir.file("theirs"));
  REQUIRE_FALSE(theirs);
  CHECK(theirs.error().what().find("owned by uid 65534") != std::string::npos);
}

TEST_CASE("entry sizes and removal never go through a symlink") {
  TempDir dir;
  auto fd = base::open_cache_folder(dir.file("cache"));
  REQUIRE(fd);
  write(dir.file("cache/run/a"), 1000);
  write(dir.file("cache/run/sub/deeper/b"), 234);
  write(dir.file("outside/precious"), 5000);
  fs::create_directory_symlink(dir.file("outside"),
                               dir.file("cache/run/sub/link"));
  write(dir.file("cache/file"), 77);
  CHECK(base::entry_bytes(fd->get(), "run") == 1234);
  CHECK(base::entry_bytes(fd->get(), "file") == 77);
  CHECK(base::entry_bytes(fd->get(), "missing") == 0);
  auto names = base::entry_names(fd->get());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"file", "run"});

  REQUIRE(base::remove_entry(fd->get(), "run"));
  CHECK_FALSE(fs::exists(dir.file("cache/run")));
  CHECK(fs::file_size(dir.file("outside/precious")) == 5000);
  REQUIRE(base::remove_entry(fd->get(), "file"));
  REQUIRE(base::remove_entry(fd->get(), "file"));  // gone already: fine
  CHECK(fs::is_empty(dir.file("cache")));
}

TEST_CASE("eviction removes the least recently used, never the one kept") {
  TempDir dir;
  auto fd = base::open_cache_folder(dir.file("cache"));
  REQUIRE(fd);
  std::vector<base::CacheEntry> entries;
  for (int i = 0; i < 4; ++i) {
    const std::string name = "e" + std::to_string(i);
    write(dir.file("cache/" + name + "/data"), 100);
    set_used(dir.file("cache/" + name), 1000 + i);
    entries.push_back({name, 100, {1000 + i, 0}});
  }
  // e0 is the oldest but kept; e1 and e2 go to fit 200 bytes.
  CHECK(base::evict_least_recently_used(fd->get(), entries, 200, "e0") == 200);
  CHECK(fs::exists(dir.file("cache/e0")));
  CHECK_FALSE(fs::exists(dir.file("cache/e1")));
  CHECK_FALSE(fs::exists(dir.file("cache/e2")));
  CHECK(fs::exists(dir.file("cache/e3")));
  // Under the cap: nothing goes.
  entries = {{"e0", 100, {1000, 0}}, {"e3", 100, {1003, 0}}};
  CHECK(base::evict_least_recently_used(fd->get(), entries, 1000) == 200);
  CHECK(fs::exists(dir.file("cache/e0")));
  // A touched entry is the most recently used.
  base::touch_cache_entry(fd->get(), "e0");
  struct stat st {};
  REQUIRE(::stat(dir.file("cache/e0").c_str(), &st) == 0);
  CHECK(st.st_mtim.tv_sec > 1003);
}
