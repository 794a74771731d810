// SCAFFOLD: replaced by the compare tests (stats_test.cpp, ...).
#include <doctest/doctest.h>

#include "compare/compare.hpp"

TEST_CASE("compare: default settings are the documented ones") {
  runner::compare::CompareOptions options;
  CHECK(options.settings.alpha == 0.05);
  CHECK(options.settings.threshold == 0.05);
  CHECK(options.settings.min_rounds == 6);
}
