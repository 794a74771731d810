// The e2e helpers themselves: what a test passes to run_process must reach
// the process it runs, whatever this process inherited.
#include "tests/e2e/e2e_support.hpp"

#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

using runner::testing::run_process;

TEST_SUITE("e2e") {
  TEST_CASE(
      "run_process: a variable the test passes replaces an inherited one") {
    // getenv() returns the first of two entries of one name, so a passed
    // TMPDIR appended after an inherited one would not be the one used.
    REQUIRE(::setenv("RUNNER_E2E_PROBE", "inherited", 1) == 0);
    auto r = run_process({"/usr/bin/env"}, {"RUNNER_E2E_PROBE=passed"});
    ::unsetenv("RUNNER_E2E_PROBE");
    INFO(r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("RUNNER_E2E_PROBE=passed\n") != std::string::npos);
    CHECK(r.out.find("RUNNER_E2E_PROBE=inherited") == std::string::npos);
    // Other inherited variables are kept.
    REQUIRE(std::getenv("RUNNER_BIN") != nullptr);
    CHECK(r.out.find(std::string("RUNNER_BIN=") + std::getenv("RUNNER_BIN")) !=
          std::string::npos);
  }
}
