// base::read_file / write_file_atomic / set_log_file against files a hostile
// local user planted: symlinks at the names we write (and at the temporary
// name write_file_atomic used to predict), a FIFO and a device where we read.
// Only the API that existed before the hardening is used, so these cases
// build and fail on the old code.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "base/log.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

constexpr const char* kPrecious = "precious content\n";

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool is_regular_not_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

enum class Outcome { kOk, kFailed, kHung };

// Runs `fn` in a child process (1 GiB address space at most) and returns
// whether it returned true, false, or had not finished after 10 s (then
// the child is killed): a read that blocks must fail the test, not hang it.
Outcome run_bounded(const std::function<bool()>& fn) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &limit);
    bool ok = false;
    try {
      ok = fn();
    } catch (...) {  // e.g. bad_alloc: never back into doctest in the child
    }
    ::_exit(ok ? 0 : 1);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Outcome::kHung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? Outcome::kOk
                                                       : Outcome::kFailed;
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
    // What write_file_atomic used to open with O_CREAT|O_TRUNC.
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
