// SCAFFOLD: replaced by the test of format/s3_xml.
#include <doctest/doctest.h>

#include "format/format.hpp"

TEST_CASE("s3_xml scaffold") { CHECK(runner::format::kStoreRecordVersion == 1); }
