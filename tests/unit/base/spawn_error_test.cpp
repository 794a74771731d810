// Spawn errors name the real cause: each case makes the file for real (a
// directory, a file without +x, a text file with +x, a missing path, a
// script whose interpreter is missing, a path under an unsearchable
// directory) and checks the words of the message and the errno.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "tests/support/shared_dir.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

using runner::base::ChildProcess;
using runner::base::Error;
using runner::base::SpawnOptions;
using runner::testing::TempDir;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void write_file(const std::string& path, const std::string& text, int mode) {
  REQUIRE(runner::base::write_file_atomic(path, text));
  REQUIRE(::chmod(path.c_str(), static_cast<mode_t>(mode)) == 0);
}

// What `body` returns, run in a forked child (as the user `nobody`, uid
// 65534, when `as_nobody`): a process whose permissions differ from ours.
std::string in_child(bool as_nobody, const std::function<std::string()>& body) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    if (as_nobody && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(3);
    const std::string text = body();
    (void)!::write(pipe_fds[1], text.data(), text.size());
    _exit(0);
  }
  ::close(pipe_fds[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof(buf))) > 0)
    text.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return text;
}

// The error of spawning `path` (the spawn must fail).
Error spawn_error(const std::string& path, bool suspended = false) {
  SpawnOptions opts;
  opts.argv = {path};
  opts.suspended = suspended;
  auto child = ChildProcess::spawn(opts);
  if (child && suspended) {
    auto released = child->release();
    REQUIRE_FALSE(released);
    return released.error();
  }
  REQUIRE_FALSE(child);
  return child.error();
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("spawning a missing path says not found") {
    TempDir dir;
    Error error = spawn_error(dir.file("missing"));
    INFO(error.what());
    CHECK(contains(error.what(), dir.file("missing") + ": not found"));
    CHECK(error.code() == ENOENT);
    CHECK(runner::base::spawn_error_exit_code(error) == 127);
  }

  TEST_CASE("spawning a directory says it is a directory") {
    TempDir dir;
    Error error = spawn_error(dir.path());
    INFO(error.what());
    CHECK(contains(error.what(), "is a directory"));
    CHECK(contains(error.what(), "Permission denied"));
    CHECK_FALSE(contains(error.what(), "not found"));
    CHECK(error.code() == EACCES);
    CHECK(runner::base::spawn_error_exit_code(error) == 126);
  }

  TEST_CASE("spawning a file without execute permission says so") {
    TempDir dir;
    write_file(dir.file("data"), "#!/bin/sh\nexit 0\n", 0644);
    Error error = spawn_error(dir.file("data"));
    INFO(error.what());
    CHECK(contains(error.what(), "no execute permission (mode 0644)"));
    CHECK(contains(error.what(), "Permission denied"));
    CHECK_FALSE(contains(error.what(), "not found"));
    CHECK(error.code() == EACCES);
  }

  TEST_CASE("spawning an executable text file says not an executable") {
    // +x but neither ELF nor #!: execve fails with ENOEXEC (there is no
    // fall back to /bin/sh as in execvp).
    TempDir dir;
    write_file(dir.file("notes"), "just some text\n", 0755);
    for (bool suspended : {false, true}) {
      CAPTURE(suspended);
      Error error = spawn_error(dir.file("notes"), suspended);
      INFO(error.what());
      CHECK(contains(error.what(), dir.file("notes") + ": not an executable"));
      CHECK_FALSE(contains(error.what(), "not found"));
      CHECK(error.code() == ENOEXEC);
      CHECK(runner::base::spawn_error_exit_code(error) == 126);
    }
  }

  TEST_CASE("a script whose interpreter is missing names the interpreter") {
    TempDir dir;
    write_file(dir.file("script"), "#!/nonexistent/interpreter\n", 0755);
    Error error = spawn_error(dir.file("script"));
    INFO(error.what());
    CHECK(contains(error.what(), "interpreter"));
    CHECK(contains(error.what(), "/nonexistent/interpreter"));
    CHECK(error.code() == ENOENT);
  }

  TEST_CASE("a command in PATH without execute permission is not 'not found'") {
    TempDir dir;
    write_file(dir.file("mycmd"), "#!/bin/sh\nexit 0\n", 0644);
    auto found = runner::base::find_executable("mycmd", dir.path());
    REQUIRE_FALSE(found);
    INFO(found.error().what());
    CHECK(contains(found.error().what(), dir.file("mycmd")));
    CHECK(contains(found.error().what(), "no execute permission"));
    CHECK(found.error().code() == EACCES);
    auto missing = runner::base::find_executable("no-such-cmd-xyz", dir.path());
    REQUIRE_FALSE(missing);
    CHECK(contains(missing.error().what(), "command not found: no-such-cmd"));
    CHECK(missing.error().code() == ENOENT);
  }

  TEST_CASE("a path under an unsearchable directory says permission denied") {
    // As root the directory is made unsearchable for the user `nobody`
    // (uid 65534), which a forked child becomes before spawning; otherwise
    // the directory is made unsearchable for ourselves (mode 0).
    // As root, under a directory nobody can reach ($TMPDIR may be private),
    // so that `locked` is the first directory nobody cannot search.
    const bool root = ::geteuid() == 0;
    TempDir own;
    runner::testing::SharedDir shared;
    if (root && shared.path().empty()) RUNNER_SKIP_CASE(shared.why());
    std::string locked = (root ? shared.path() : own.path()) + "/locked";
    REQUIRE(::mkdir(locked.c_str(), 0700) == 0);
    write_file(locked + "/prog", "#!/bin/sh\nexit 0\n", 0755);
    if (!root) REQUIRE(::chmod(locked.c_str(), 0) == 0);
    const std::string text = in_child(root, [&] {
      SpawnOptions opts;
      opts.argv = {locked + "/prog"};
      auto child = ChildProcess::spawn(opts);
      return child ? std::string("spawned")
                   : std::to_string(child.error().code()) + " " +
                         child.error().what();
    });
    if (!root) ::chmod(locked.c_str(), 0700);
    INFO(text);
    CHECK(text.rfind(std::to_string(EACCES) + " ", 0) == 0);
    CHECK(contains(text, "Permission denied"));
    CHECK(contains(text, "the directory " + locked + " on its path"));
    CHECK(contains(text, "not searchable"));
    CHECK_FALSE(contains(text, "not found"));
  }

  // A PATH entry this user cannot search (root's PATH kept by `su`, say)
  // hides nothing: the command is not found, as a shell says, rather than
  // refused for a permission on a file that may not exist.
  TEST_CASE(
      "an unsearchable directory in PATH: a missing command is not found") {
    const bool root = ::geteuid() == 0;
    TempDir own;
    runner::testing::SharedDir shared;
    if (root && shared.path().empty()) RUNNER_SKIP_CASE(shared.why());
    const std::string locked = (root ? shared.path() : own.path()) + "/locked";
    REQUIRE(::mkdir(locked.c_str(), 0700) == 0);
    if (!root) REQUIRE(::chmod(locked.c_str(), 0) == 0);
    const std::string text = in_child(root, [&] {
      auto found =
          runner::base::find_executable("no-such-cmd-xyz", locked + ":/bin");
      return found ? "found " + *found
                   : std::to_string(found.error().code()) + " " +
                         found.error().message();
    });
    if (!root) ::chmod(locked.c_str(), 0700);
    INFO(text);
    CHECK(text ==
          std::to_string(ENOENT) + " command not found: no-such-cmd-xyz");
  }
}
