#include "base/result.hpp"

#include <cerrno>
#include <memory>
#include <string>

#include <doctest/doctest.h>

namespace {

using runner::base::Error;
using runner::base::Result;
using runner::base::Status;

Result<int> parse_positive(int v) {
  if (v <= 0) return Error("not positive: " + std::to_string(v), EINVAL);
  return v;
}

Result<int> doubled(int v) {
  RUNNER_ASSIGN_OR_RETURN(int x, parse_positive(v), "doubling");
  return 2 * x;
}

Status check_twice(int v) {
  RUNNER_RETURN_IF_ERROR(doubled(v), "outer");
  return {};
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("Result holds a value") {
    Result<int> r = parse_positive(4);
    REQUIRE(r.has_value());
    CHECK(static_cast<bool>(r));
    CHECK(*r == 4);
    CHECK(r.value_or(9) == 4);
  }

  TEST_CASE("Result error chaining keeps errno and prepends context") {
    Result<int> r = doubled(-1);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code() == EINVAL);
    CHECK(r.error().message() == "doubling: not positive: -1");
    CHECK(r.error().what() == "doubling: not positive: -1: Invalid argument");
    CHECK(r.value_or(9) == 9);

    Status s = check_twice(-3);
    REQUIRE_FALSE(s);
    CHECK(s.error().message() == "outer: doubling: not positive: -3");
    CHECK(check_twice(2).has_value());
  }

  TEST_CASE("Result works with move-only values") {
    Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
    REQUIRE(r);
    std::unique_ptr<int> p = std::move(r).value();
    CHECK(*p == 7);
  }

  TEST_CASE("errno_error captures errno") {
    errno = ENOENT;
    Error e = runner::base::errno_error("open x");
    CHECK(e.code() == ENOENT);
    CHECK(e.what().find("No such file") != std::string::npos);
  }
}
