// The outputs of `runner compare` for a fixed report
// (tests/support/compare_sample.hpp): compare.json, compare.md and the
// terminal text must equal tests/golden/compare/ byte for byte (a mismatch
// prints both). UPDATE_GOLDEN=1 rewrites those files instead (review the
// diff before committing).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "compare/render.hpp"
#include "format/format.hpp"
#include "tests/support/compare_sample.hpp"

namespace fs = std::filesystem;

namespace {

fs::path compare_dir() {
  const char* dir = std::getenv("GOLDEN_DIR");
  REQUIRE_MESSAGE(dir != nullptr, "GOLDEN_DIR is not set (run through meson)");
  return fs::path(dir) / "compare";
}

bool updating() {
  const char* update = std::getenv("UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void check_golden(const char* name, const std::string& actual) {
  const fs::path expected = compare_dir() / name;
  if (updating()) {
    std::ofstream(expected, std::ios::binary) << actual;
    MESSAGE("UPDATE_GOLDEN=1: rewrote " << expected.string());
    return;
  }
  REQUIRE_MESSAGE(fs::exists(expected), expected.string() << " is missing");
  const std::string want = slurp(expected);
  CHECK_MESSAGE(want == actual, name << " differs from " << expected.string()
                                     << "\n--- expected\n"
                                     << want << "\n--- actual\n"
                                     << actual);
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("compare outputs of the sample report equal tests/golden/compare") {
    const auto report = runner::testing::sample_compare_report();
    check_golden("compare.json", runner::format::write_compare_report(report));
    check_golden("compare.md", runner::compare::render_markdown(report));
    check_golden("compare.txt", runner::compare::render_text(report));
  }

  TEST_CASE("the golden compare.json reads back as the sample report") {
    auto read = runner::format::read_compare_report(
        slurp(compare_dir() / "compare.json"));
    REQUIRE_MESSAGE(read, read.error().message());
    CHECK(*read == runner::testing::sample_compare_report());
  }
}
