// SCAFFOLD: replaced by the e2e test of upload.
#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"

TEST_CASE("upload scaffold") { CHECK(!runner::testing::binary("RUNNER_BIN").empty()); }
