#include "base/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include <doctest/doctest.h>

#include "base/mapped_region.hpp"
#include "tests/support/temp_dir.hpp"

namespace {
bool fd_is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }
}  // namespace

TEST_SUITE("base") {
  TEST_CASE("UniqueFd closes on destruction") {
    int raw = ::open("/dev/null", O_RDONLY);
    REQUIRE(raw >= 0);
    {
      runner::base::UniqueFd fd(raw);
      CHECK(fd.valid());
    }
    CHECK_FALSE(fd_is_open(raw));
  }

  TEST_CASE("UniqueFd move transfers ownership once") {
    int raw = ::open("/dev/null", O_RDONLY);
    runner::base::UniqueFd a(raw);
    runner::base::UniqueFd b(std::move(a));
    CHECK_FALSE(a.valid());
    CHECK(b.get() == raw);
    runner::base::UniqueFd c;
    c = std::move(b);
    CHECK(c.get() == raw);
    CHECK(fd_is_open(raw));
    c.reset();
    CHECK_FALSE(fd_is_open(raw));
  }

  TEST_CASE("UniqueFd release gives the fd away") {
    int raw = ::open("/dev/null", O_RDONLY);
    int released;
    {
      runner::base::UniqueFd fd(raw);
      released = fd.release();
      CHECK_FALSE(fd.valid());
    }
    CHECK(released == raw);
    CHECK(fd_is_open(raw));
    ::close(raw);
  }

  TEST_CASE("MappedRegion maps a file and rejects missing ones") {
    runner::testing::TempDir dir;
    std::string path = dir.file("data");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    REQUIRE(::write(fd, "hello", 5) == 5);
    ::close(fd);
    auto region = runner::base::MappedRegion::map_file(path);
    REQUIRE(region);
    CHECK(region->size() == 5);
    CHECK(region->bytes()[0] == 'h');
    auto moved = std::move(*region);
    CHECK(moved.size() == 5);
    auto missing = runner::base::MappedRegion::map_file(dir.file("nope"));
    CHECK_FALSE(missing);
    CHECK(missing.error().code() == ENOENT);
  }
}
