// SCAFFOLD: replaced by the e2e test of action.
#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"

TEST_CASE("action scaffold") { CHECK(!runner::testing::binary("RUNNER_BIN").empty()); }
