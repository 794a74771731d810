// The hardened file primitives of base/fs.hpp: create_file, read limits and
// owner checks, the private profile folder, temporary files in $TMPDIR.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/planted_files.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using runner::base::ReadOptions;

namespace {

using runner::testing::kPrecious;
using runner::testing::read_text;
using runner::testing::write_text;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode;
}

// Sets an environment variable for the scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("create_file replaces a symlink and an old file, not a FIFO") {
    runner::testing::TempDir dir;
    const std::string victim = dir.file("victim");
    write_text(victim, kPrecious);
    const std::string path = dir.file("perf.pipedata");
    REQUIRE(::symlink(victim.c_str(), path.c_str()) == 0);
    {
      auto fd = runner::base::create_file(path);
      REQUIRE(fd);
      REQUIRE(runner::base::write_all(fd->get(), "one"));
    }
    CHECK(read_text(victim) == kPrecious);
    CHECK(S_ISREG(mode_of(path)));
    {
      auto fd = runner::base::create_file(path);
      REQUIRE(fd);
      REQUIRE(runner::base::write_all(fd->get(), "2"));
    }
    CHECK(read_text(path) == "2");

    const std::string fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto refused = runner::base::create_file(fifo);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().what().find(fifo + ": exists and is a FIFO") !=
          std::string::npos);
    CHECK(S_ISFIFO(mode_of(fifo)));
  }

  TEST_CASE("read_file: size cap, owner check, missing file keeps ENOENT") {
    runner::testing::TempDir dir;
    const std::string path = dir.file("f");
    write_text(path, std::string(100, 'x'));
    ReadOptions capped;
    capped.max_size = 99;
    auto big = runner::base::read_file(path, capped);
    REQUIRE_FALSE(big);
    CHECK(big.error().what().find(path + ": bigger than the 99-byte limit") !=
          std::string::npos);
    capped.max_size = 100;
    CHECK(runner::base::read_file(path, capped));

    ReadOptions owned;
    owned.owner = ::geteuid();
    CHECK(runner::base::read_file(path, owned));
    owned.owner = ::geteuid() + 1;
    auto foreign = runner::base::read_file(path, owned);
    REQUIRE_FALSE(foreign);
    CHECK(foreign.error().what().find(path + ": owned by uid") !=
          std::string::npos);

    auto missing = runner::base::read_file(dir.file("none"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code() == ENOENT);

    // /proc files say size 0 and still read fully.
    auto maps = runner::base::read_file("/proc/self/maps");
    REQUIRE(maps);
    CHECK_FALSE(maps->empty());
  }

  TEST_CASE("read_file follows a symlink only when asked") {
    runner::testing::TempDir dir;
    write_text(dir.file("real"), "content");
    REQUIRE(::symlink("real", dir.file("link").c_str()) == 0);
    CHECK_FALSE(runner::base::read_file(dir.file("link")));
    auto followed = runner::base::read_file(dir.file("link"),
                                            runner::base::following_symlinks());
    REQUIRE(followed);
    CHECK(*followed == "content");
  }

  TEST_CASE("write_file_atomic does not write through a symlinked folder") {
    runner::testing::TempDir dir;
    REQUIRE(fs::create_directory(dir.file("real")));
    REQUIRE(::symlink("real", dir.file("link").c_str()) == 0);
    auto st = runner::base::write_file_atomic(dir.file("link/summary.json"),
                                              std::string_view("{}"));
    REQUIRE_FALSE(st);
    CHECK(st.error().what().find("is a symbolic link") != std::string::npos);
    CHECK(fs::is_empty(dir.file("real")));
  }

  TEST_CASE("prepare_private_directory creates a private folder") {
    runner::testing::TempDir dir;
    const std::string path = dir.file("a/b/profile");
    REQUIRE(runner::base::prepare_private_directory(path));
    CHECK(S_ISDIR(mode_of(path)));
    CHECK((mode_of(path) & (S_IWGRP | S_IWOTH)) == 0);
    // Again, with content (a second run into the same folder).
    std::ofstream(path + "/old") << "x";
    CHECK(runner::base::prepare_private_directory(path));
  }

  TEST_CASE(
      "prepare_private_directory tightens an empty shared folder and "
      "refuses a used one") {
    runner::testing::TempDir dir;
    const std::string empty = dir.file("empty");
    REQUIRE(fs::create_directory(empty));
    REQUIRE(::chmod(empty.c_str(), 0777) == 0);
    REQUIRE(runner::base::prepare_private_directory(empty));
    CHECK((mode_of(empty) & 0777) == 0755);

    const std::string used = dir.file("used");
    REQUIRE(fs::create_directory(used));
    REQUIRE(::chmod(used.c_str(), 0775) == 0);
    std::ofstream(used + "/planted") << "x";
    auto st = runner::base::prepare_private_directory(used);
    REQUIRE_FALSE(st);
    CHECK(st.error().what().find(used + ": writable by group or others (mode "
                                        "0775) and not empty") !=
          std::string::npos);
    CHECK((mode_of(used) & 0777) == 0775);  // left as it was
  }

  TEST_CASE("prepare_private_directory refuses a symlink") {
    runner::testing::TempDir dir;
    REQUIRE(fs::create_directory(dir.file("real")));
    REQUIRE(::symlink("real", dir.file("link").c_str()) == 0);
    auto st = runner::base::prepare_private_directory(dir.file("link"));
    REQUIRE_FALSE(st);
    CHECK(st.error().what().find("is a symbolic link") != std::string::npos);
  }

  TEST_CASE("prepare_private_directory refuses another user's folder") {
    if (::geteuid() != 0)
      RUNNER_SKIP_CASE("needs root to chown a folder to nobody");
    runner::testing::TempDir dir;
    const std::string theirs = dir.file("theirs");
    REQUIRE(fs::create_directory(theirs));
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    auto st = runner::base::prepare_private_directory(theirs);
    REQUIRE_FALSE(st);
    CHECK(st.error().what().find(theirs + ": owned by uid 65534") !=
          std::string::npos);
  }

  TEST_CASE("temporary files go to $TMPDIR, else /tmp") {
    runner::testing::TempDir dir;
    {
      ScopedEnv env("TMPDIR", dir.path());
      CHECK(runner::base::temp_directory() == dir.path());
      auto file = runner::base::create_temp_file("unit.");
      REQUIRE(file);
      CHECK(file->path.rfind(dir.path() + "/unit.", 0) == 0);
      CHECK((mode_of(file->path) & 0777) == 0600);
      ::unlink(file->path.c_str());
      auto anonymous = runner::base::create_anonymous_temp_file("anon.");
      REQUIRE(anonymous);
      CHECK(fs::is_empty(dir.path()));
    }
    {
      ScopedEnv env("TMPDIR", dir.file("missing"));
      CHECK(runner::base::temp_directory() == "/tmp");
    }
  }

  TEST_CASE("cache folders: $XDG_CACHE_HOME/runner, else ~/.cache/runner") {
    using runner::base::cache_directory;
    CHECK(cache_directory("finalize", "/x", "/h") == "/x/runner/finalize");
    CHECK(cache_directory("store", std::nullopt, "/h") ==
          "/h/.cache/runner/store");
    // A relative XDG_CACHE_HOME is ignored, as the XDG spec says.
    CHECK(cache_directory("store", "rel", "/h") == "/h/.cache/runner/store");
    CHECK(cache_directory("store", std::nullopt, "") ==
          runner::base::temp_directory() + "/runner-store-cache-" +
              std::to_string(::geteuid()));
    ScopedEnv xdg("XDG_CACHE_HOME", "/env-xdg");
    CHECK(cache_directory("finalize") == "/env-xdg/runner/finalize");
  }
}
