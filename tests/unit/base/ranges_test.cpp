#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"

namespace {

struct Range {
  uint64_t start, end;
};

}  // namespace

TEST_CASE("find_containing: the range holding an address, or none") {
  std::vector<Range> ranges = {{0x10, 0x20}, {0x20, 0x30}, {0x40, 0x50}};
  CHECK(runner::base::find_containing(ranges, 0x10) == &ranges[0]);
  CHECK(runner::base::find_containing(ranges, 0x1f) == &ranges[0]);
  CHECK(runner::base::find_containing(ranges, 0x20) == &ranges[1]);
  CHECK(runner::base::find_containing(ranges, 0x30) == nullptr);  // gap
  CHECK(runner::base::find_containing(ranges, 0x0f) == nullptr);  // before
  CHECK(runner::base::find_containing(ranges, 0x50) == nullptr);  // after
  std::vector<Range> empty;
  CHECK(runner::base::find_containing(empty, 0x10) == nullptr);
}

TEST_CASE("find_containing: looks back over a few overlapping ranges") {
  // A long range followed by short ones that start inside it.
  std::vector<Range> ranges = {
      {0x0, 0x1000}, {0x10, 0x11}, {0x20, 0x21}, {0x30, 0x31}};
  CHECK(runner::base::find_containing(ranges, 0x35) == &ranges[0]);
  CHECK(runner::base::find_containing(ranges, 0x35, 3) == nullptr);
  const std::vector<Range>& view = ranges;
  CHECK(runner::base::find_containing(view, 0x30) == &view[3]);
}
