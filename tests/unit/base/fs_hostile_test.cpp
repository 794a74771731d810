// base::read_file / write_file_atomic / set_log_file against files a hostile
// local user planted: symlinks at the names we write (and at the temporary
// name a predictable write_file_atomic would pick), a FIFO and a device where
// we read.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>
#include <string>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "base/log.hpp"
#include "tests/support/bounded_child.hpp"
#include "tests/support/planted_files.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using runner::testing::is_regular_not_link;
using runner::testing::kPrecious;
using runner::testing::Outcome;
using runner::testing::read_text;
using runner::testing::write_text;

// runner::testing::run_bounded with 1 GiB of address space at most in the
// child: a read without a size cap fails the test, not the machine.
Outcome run_bounded(const std::function<bool()>& fn) {
  return runner::testing::run_bounded([&] {
    rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &limit);
    return fn();
  });
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE(
      "write_file_atomic: a symlink at the old temp name is not "
      "written through") {
    runner::testing::TempDir dir;
    const std::string victim = dir.file("victim");
    write_text(victim, kPrecious);
    const std::string path = dir.file("perf.metadata");
    // The name a predictable write_file_atomic would open with O_CREAT|O_TRUNC.
    const std::string guessed = path + ".tmp." + std::to_string(::getpid());
    REQUIRE(::symlink(victim.c_str(), guessed.c_str()) == 0);

    REQUIRE(runner::base::write_file_atomic(path, std::string_view("new")));
    CHECK(read_text(victim) == kPrecious);
    CHECK(is_regular_not_link(path));
    CHECK(read_text(path) == "new");
  }

  TEST_CASE("write_file_atomic replaces a symlink at the name itself") {
    runner::testing::TempDir dir;
    const std::string victim = dir.file("victim");
    write_text(victim, kPrecious);
    const std::string path = dir.file("a.symbols.map");
    REQUIRE(::symlink(victim.c_str(), path.c_str()) == 0);
    REQUIRE(runner::base::write_file_atomic(path, std::string_view("new")));
    CHECK(read_text(victim) == kPrecious);
    CHECK(is_regular_not_link(path));
  }

  TEST_CASE(
      "set_log_file replaces a planted symlink, never truncates its "
      "target") {
    runner::testing::TempDir dir;
    const std::string victim = dir.file("victim");
    write_text(victim, kPrecious);
    const std::string log = dir.file("runner.log");
    REQUIRE(::symlink(victim.c_str(), log.c_str()) == 0);
    runner::base::configure_logging("error");
    (void)runner::base::set_log_file(log);
    RUNNER_LOG("base", kInfo) << "logged line";
    runner::base::close_log_file();
    runner::base::configure_logging("");
    CHECK(read_text(victim) == kPrecious);
    CHECK(is_regular_not_link(log));
    CHECK(read_text(log) == "[info] base: logged line\n");
  }

  TEST_CASE("read_file does not follow a symlink") {
    runner::testing::TempDir dir;
    const std::string secret = dir.file("secret");
    write_text(secret, kPrecious);
    const std::string link = dir.file("perf-1.map");
    REQUIRE(::symlink(secret.c_str(), link.c_str()) == 0);
    auto text = runner::base::read_file(link);
    REQUIRE_FALSE(text);
    CHECK(text.error().what().find(link + ": is a symbolic link") !=
          std::string::npos);
  }

  TEST_CASE("read_file of a FIFO fails at once, naming it") {
    runner::testing::TempDir dir;
    const std::string fifo = dir.file("perf-2.map");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    Outcome outcome = run_bounded([&] {
      auto text = runner::base::read_file(fifo);
      return !text &&
             text.error().what().find(fifo + ": a FIFO") != std::string::npos;
    });
    CHECK(outcome == Outcome::kOk);
  }

  TEST_CASE("read_file of a device fails at once, naming it") {
    Outcome outcome = run_bounded([] {
      auto text = runner::base::read_file("/dev/zero");
      return !text && text.error().what().find(
                          "/dev/zero: a character device") != std::string::npos;
    });
    CHECK(outcome == Outcome::kOk);
  }
}
