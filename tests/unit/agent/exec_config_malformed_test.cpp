// Hostile runner.yml files through the real loader (load_exec_config on a
// file in a temp directory): nesting deep enough to overflow a recursive
// parser, and a UTF-8 byte order mark.
#include <string>

#include <doctest/doctest.h>

#include "agent/exec_config.hpp"
#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using runner::agent::load_exec_config;
using runner::testing::TempDir;

namespace {

std::string repeat(std::string_view part, int times) {
  std::string out;
  out.reserve(part.size() * static_cast<size_t>(times));
  for (int i = 0; i < times; ++i) out += part;
  return out;
}

// load_exec_config on a runner.yml holding `text`: the error message, or
// "" when it loaded.
std::string load_error(const std::string& text) {
  TempDir dir;
  REQUIRE(runner::base::write_file_atomic(dir.file("runner.yml"), text));
  auto loaded = load_exec_config(dir.path());
  if (loaded) {
    REQUIRE(loaded->has_value());
    return "";
  }
  return loaded.error().message();
}

}  // namespace

TEST_SUITE("agent") {
  TEST_CASE("runner.yml nested 20 000 levels deep is refused, not a crash") {
    struct Case {
      const char* what;
      std::string text;
    };
    for (const Case& c : {
             Case{"flow lists",
                  "benchmarks: " + repeat("[", 20000) + repeat("]", 20000)},
             Case{"flow maps", "benchmarks: " + repeat("{a: ", 20000) + "b" +
                                   repeat("}", 20000)},
             Case{"block lists on one line",
                  "benchmarks:\n  " + repeat("- ", 20000) + "x\n"},
             // One more space of indentation per level (2 000 levels: the
             // file grows with the square of the depth).
             Case{"block mappings",
                  [] {
                    std::string text;
                    for (int i = 0; i < 2000; ++i)
                      text += std::string(static_cast<size_t>(i), ' ') + "k:\n";
                    return text;
                  }()},
         }) {
      CAPTURE(c.what);
      const std::string error = load_error(c.text);
      CHECK(error.find("runner.yml:") != std::string::npos);
      CHECK(error.find(": lists and mappings nested") != std::string::npos);
      CHECK(error.find("nested deeper than 64 levels") != std::string::npos);
    }
  }

  TEST_CASE("nesting below the limit is parsed as before") {
    // 60 levels of lists as the command: parsed, then refused by the schema
    // (a command is a list of strings), not by the depth limit.
    const std::string error = load_error(
        "benchmarks:\n  - exec: " + repeat("[", 60) + repeat("]", 60) + "\n");
    CHECK(error.find("nested deeper") == std::string::npos);
    CHECK_FALSE(error.empty());
  }

  TEST_CASE("a UTF-8 byte order mark at the start of runner.yml is accepted") {
    TempDir dir;
    REQUIRE(runner::base::write_file_atomic(
        dir.file("runner.yml"),
        "\xEF\xBB\xBF"
        "benchmarks:\n  - name: bom\n    exec: ls -l\n"));
    auto loaded = load_exec_config(dir.path());
    REQUIRE_MESSAGE(loaded, loaded.error().what());
    REQUIRE(loaded->has_value());
    REQUIRE((*loaded)->targets.size() == 1);
    CHECK((*loaded)->targets[0].name == "bom");
    CHECK((*loaded)->targets[0].command ==
          std::vector<std::string>{"ls", "-l"});
  }
}
