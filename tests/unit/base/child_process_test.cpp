#include "base/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using runner::base::ChildProcess;
using runner::base::SpawnOptions;

TEST_SUITE("base") {
  TEST_CASE("signal_name: SIG<abbrev>, or the number") {
    CHECK(runner::base::signal_name(SIGTERM) == "SIGTERM");
    CHECK(runner::base::signal_name(SIGINT) == "SIGINT");
    CHECK(runner::base::signal_name(1000) == "signal 1000");
  }

  TEST_CASE("spawn reports the exit code") {
    SpawnOptions opts;
    opts.argv = {"sh", "-c", "exit 3"};
    auto child = ChildProcess::spawn(opts);
    REQUIRE(child);
    auto status = child->wait();
    REQUIRE(status);
    CHECK_FALSE(status->signaled);
    CHECK(status->code == 3);
    CHECK(status->shell_code() == 3);
  }

  TEST_CASE("spawn passes the environment and working directory") {
    runner::testing::TempDir dir;
    SpawnOptions opts;
    opts.argv = {"/bin/sh", "-c", "printf '%s' \"$MY_VAR\" > out; pwd >> out"};
    opts.env =
        std::vector<std::string>{"MY_VAR=hello world", "PATH=/usr/bin:/bin"};
    opts.cwd = dir.path();
    auto child = ChildProcess::spawn(opts);
    REQUIRE(child);
    auto status = child->wait();
    REQUIRE(status);
    CHECK(status->success());
    auto out = runner::base::read_file(dir.file("out"));
    REQUIRE(out);
    CHECK(*out == "hello world" + dir.path() + "\n");
  }

  TEST_CASE("a child killed by a signal reports it") {
    SpawnOptions opts;
    opts.argv = {"sleep", "30"};
    auto child = ChildProcess::spawn(opts);
    REQUIRE(child);
    REQUIRE(child->send_signal(SIGKILL));
    auto status = child->wait();
    REQUIRE(status);
    CHECK(status->signaled);
    CHECK(status->signal == SIGKILL);
    CHECK(status->shell_code() == 137);
  }

  TEST_CASE("a missing command is a clear error") {
    SpawnOptions opts;
    opts.argv = {"definitely-not-a-command-xyz"};
    auto child = ChildProcess::spawn(opts);
    REQUIRE_FALSE(child);
    CHECK(child.error().message().find("command not found") !=
          std::string::npos);
  }

  TEST_CASE("a suspended child does not run before release") {
    runner::testing::TempDir dir;
    std::string marker = dir.file("ran");
    SpawnOptions opts;
    opts.argv = {"touch", marker};
    opts.suspended = true;
    auto child = ChildProcess::spawn(opts);
    REQUIRE(child);
    ::usleep(100000);
    CHECK_FALSE(runner::base::read_file(marker).has_value());
    auto try_status = child->try_wait();
    REQUIRE(try_status);
    CHECK_FALSE(try_status->has_value());
    REQUIRE(child->release());
    auto status = child->wait();
    REQUIRE(status);
    CHECK(status->success());
    CHECK(runner::base::read_file(marker).has_value());
  }

  TEST_CASE("inherited fds are closed in the child") {
    runner::testing::TempDir dir;
    int fd = ::open("/dev/null", O_RDONLY);  // not CLOEXEC on purpose
    REQUIRE(fd >= 3);
    SpawnOptions opts;
    std::string script = "test -e /proc/self/fd/" + std::to_string(fd) +
                         " && echo open > " + dir.file("r") +
                         " || echo closed > " + dir.file("r");
    opts.argv = {"/bin/sh", "-c", script};
    auto child = ChildProcess::spawn(opts);
    REQUIRE(child);
    REQUIRE(child->wait());
    ::close(fd);
    auto out = runner::base::read_file(dir.file("r"));
    REQUIRE(out);
    CHECK(*out == "closed\n");
  }
}
