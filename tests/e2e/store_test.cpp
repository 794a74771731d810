// SCAFFOLD: replaced by the e2e test of store.
#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"

TEST_CASE("store scaffold") { CHECK(!runner::testing::binary("RUNNER_BIN").empty()); }
