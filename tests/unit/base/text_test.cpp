#include "base/text.hpp"

#include <string_view>

#include <doctest/doctest.h>

using runner::base::take_item;

TEST_SUITE("base") {
  TEST_CASE("take_item walks a comma-separated list") {
    std::string_view rest = "fifo:debug,,profiler";
    CHECK(take_item(rest, ',') == "fifo:debug");
    CHECK(rest == ",profiler");
    CHECK(take_item(rest, ',').empty());  // an empty item between commas
    CHECK(take_item(rest, ',') == "profiler");
    CHECK(rest.empty());
  }

  TEST_CASE("take_item on a trailing separator leaves nothing") {
    std::string_view rest = "a,";
    CHECK(take_item(rest, ',') == "a");
    CHECK(rest.empty());
    CHECK(take_item(rest, ',').empty());
  }
}
