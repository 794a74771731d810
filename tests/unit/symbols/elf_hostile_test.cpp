// ElfImage::open (and so --inline and the artifact builder) on a path that
// is a FIFO or a device: refused at once, never blocked on.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

#include "symbols/elf_image.hpp"
#include "tests/support/bounded_child.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

// Opens `path` in a child; true when it failed with "not a regular file"
// within 10 s (a child still blocked then is killed: false).
bool refused_promptly(const std::string& path) {
  return runner::testing::run_bounded([&] {
           auto image = runner::symbols::ElfImage::open(path);
           return !image && image.error().what().find("not a regular file") !=
                                std::string::npos;
         }) == runner::testing::Outcome::kOk;
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
