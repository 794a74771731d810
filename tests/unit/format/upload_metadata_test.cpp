// SCAFFOLD: replaced by the test of format/upload_metadata.
#include <doctest/doctest.h>

#include "format/format.hpp"

TEST_CASE("upload_metadata scaffold") { CHECK(runner::format::kStoreRecordVersion == 1); }
