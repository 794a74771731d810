// /proc/<pid>/stat: the initial stack area's fields, whatever the command
// name holds.
#include <fstream>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

#include "format/format.hpp"

namespace runner::format {
namespace {

// A stat line of a process whose command name is `comm`, with fields 28
// and 48-51 set and every other number its field's index.
std::string stat_line(const std::string& comm, uint64_t start_stack,
                      uint64_t arg_start, uint64_t env_start) {
  std::string line = "4242 (" + comm + ") S";
  for (int field = 4; field <= 52; ++field) {
    uint64_t value = static_cast<uint64_t>(field);
    if (field == 28) value = start_stack;
    if (field == 48) value = arg_start;
    if (field == 49) value = arg_start + 100;
    if (field == 50) value = env_start;
    if (field == 51) value = env_start + 200;
    line += " " + std::to_string(value);
  }
  return line + "\n";
}

TEST_SUITE("format") {
  TEST_CASE("proc stat: start_stack and the argv/environment strings") {
    auto fields = parse_proc_stat_stack(
        stat_line("bench", 0x7ffd1000, 0x7ffd2000, 0x7ffd2100));
    REQUIRE(fields);
    CHECK(fields->start_stack == 0x7ffd1000);
    CHECK(fields->arg_start == 0x7ffd2000);
    CHECK(fields->arg_end == 0x7ffd2000 + 100);
    CHECK(fields->env_start == 0x7ffd2100);
    CHECK(fields->env_end == 0x7ffd2100 + 200);
    CHECK(initial_stack_floor(*fields) == 0x7ffd1000);
    // A command name with spaces and parentheses: fields count from the
    // last ')'.
    fields = parse_proc_stat_stack(
        stat_line("a) 1 2 (b c) ", 0x7ffd1000, 0x7ffd2000, 0x7ffd2100));
    REQUIRE(fields);
    CHECK(fields->start_stack == 0x7ffd1000);
    CHECK(fields->env_end == 0x7ffd2100 + 200);
    // Strings moved below start_stack (prctl PR_SET_MM_ARG_START): the
    // floor follows them.
    fields = parse_proc_stat_stack(
        stat_line("bench", 0x7ffd1000, 0x5555000, 0x7ffd2100));
    REQUIRE(fields);
    CHECK(initial_stack_floor(*fields) == 0x5555000);
    // Hidden (no permission): 0, unknown.
    fields = parse_proc_stat_stack(stat_line("bench", 0, 0, 0));
    REQUIRE(fields);
    CHECK(initial_stack_floor(*fields) == 0);
  }

  TEST_CASE("proc stat: short, cut and malformed lines are refused") {
    const std::string line =
        stat_line("bench", 0x7ffd1000, 0x7ffd2000, 0x7ffd2100);
    CHECK_FALSE(parse_proc_stat_stack(""));
    CHECK_FALSE(parse_proc_stat_stack("4242 bench S 1 2 3"));
    // Cut before field 28: refused; after it, before 48 (kernels before
    // 3.5): the string fields read 0.
    const size_t field28 = line.find(" " + std::to_string(0x7ffd1000));
    CHECK_FALSE(parse_proc_stat_stack(line.substr(0, field28)));
    auto older = parse_proc_stat_stack(line.substr(0, field28 + 12));
    REQUIRE(older);
    CHECK(older->start_stack == 0x7ffd1000);
    CHECK(older->arg_start == 0);
    std::string bad = line;
    bad.replace(field28 + 1, 1, "x");
    CHECK_FALSE(parse_proc_stat_stack(bad));
    bad = line;
    bad.insert(field28 + 1, "-");
    CHECK_FALSE(parse_proc_stat_stack(bad));
  }

  TEST_CASE("proc stat: this process's own line") {
    std::ifstream in("/proc/self/stat");
    const std::string text((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    auto fields = parse_proc_stat_stack(text);
    REQUIRE(fields);
    CHECK(fields->start_stack != 0);
    CHECK(fields->arg_start > fields->start_stack);
    CHECK(fields->arg_end <= fields->env_start);
    CHECK(fields->env_end > fields->env_start);
  }
}

}  // namespace
}  // namespace runner::format
