// SCAFFOLD: replaced by the test of format/store_record.
#include <doctest/doctest.h>

#include "format/format.hpp"

TEST_CASE("store_record scaffold") { CHECK(runner::format::kStoreRecordVersion == 1); }
