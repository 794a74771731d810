// ElfImage::open (and so --inline and the artifact builder) on a path that
// is a FIFO or a device: refused at once, never blocked on.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "symbols/elf_image.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

// Opens `path` in a child; true when it failed with "not a regular file"
// within 10 s (a child still blocked then is killed: false).
bool refused_promptly(const std::string& path) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    bool refused = false;
    try {
      auto image = runner::symbols::ElfImage::open(path);
      refused = !image && image.error().what().find("not a regular file") !=
                              std::string::npos;
    } catch (...) {  // never back into doctest in the child
    }
    ::_exit(refused ? 0 : 1);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_SUITE("symbols") {
  TEST_CASE("ElfImage::open refuses a FIFO without blocking") {
    runner::testing::TempDir dir;
    const std::string fifo = dir.file("libplanted.so");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(refused_promptly(fifo));
  }

  TEST_CASE("ElfImage::open refuses a device") {
    CHECK(refused_promptly("/dev/zero"));
  }
}
