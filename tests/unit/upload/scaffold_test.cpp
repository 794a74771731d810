// SCAFFOLD: deleted when the first real test of upload/ lands.
#include <doctest/doctest.h>

#include "upload/upload.hpp"

TEST_CASE("upload scaffold: the part links") {
  CHECK(runner::upload::ref_key("main") == "main");
}
