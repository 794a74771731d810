// The line formats: /proc/<pid>/maps and perf-<pid>.map, each read and
// written back.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "format/symbol_line.hpp"

namespace runner::format {
namespace {

TEST_SUITE("format") {
  TEST_CASE("proc maps: a line round-trips through its columns") {
    const std::string text =
        "7f1c2a400000-7f1c2a428000 r-xp 00028000 fd:01 1311809            "
        "        /usr/lib/x86_64-linux-gnu/libc.so.6";
    auto line = parse_maps_line(text);
    REQUIRE(line);
    CHECK(line->start == 0x7f1c2a400000ULL);
    CHECK(line->end == 0x7f1c2a428000ULL);
    CHECK(line->perms == "r-xp");
    CHECK(line->offset == 0x28000);
    CHECK(line->dev_major == 0xfd);
    CHECK(line->dev_minor == 1);
    CHECK(line->inode == 1311809);
    CHECK(line->path == "/usr/lib/x86_64-linux-gnu/libc.so.6");
    CHECK(format_maps_line(*line) == text);

    MapsLine anon;
    anon.start = 0x1000;
    anon.end = 0x2000;
    anon.perms = "rw-p";
    auto back = parse_maps_line(format_maps_line(anon));
    REQUIRE(back);
    CHECK(back->path.empty());
    CHECK(back->end == 0x2000);
  }

  TEST_CASE("proc maps: every line of a real maps file round-trips") {
    auto maps = base::read_file("/proc/self/maps");
    REQUIRE(maps);
    size_t lines = 0;
    detail::for_each_line(*maps, [&](std::string_view text) {
      auto line = parse_maps_line(text);
      REQUIRE(line);
      CHECK(format_maps_line(*line) == text);
      ++lines;
    });
    CHECK(lines > 5);
    CHECK(parse_maps(*maps).size() == lines);
  }

  TEST_CASE("proc maps: paths with spaces, pseudo names, deleted files") {
    const std::string text =
        "1000-2000 r-xp 00000000 08:01 5 /opt/my app/bin (deleted)\n"
        "2000-3000 r-xp 00000000 00:00 0 [vdso]\n"
        "3000-4000 rw-p 00000000 08:01 5 /opt/data\n"
        "4000-5000 r-xp 00000000 00:00 0\n"
        "5000-4000 r-xp 00000000 08:01 5 /backwards\n"
        "garbage\n";
    ProcMapsStats stats;
    auto mappings = parse_proc_maps(text, &stats);
    REQUIRE(mappings.size() == 1);
    CHECK(mappings[0].path == "/opt/my app/bin");
    CHECK(mappings[0].deleted);
    CHECK(stats.lines == 6);
    CHECK(stats.pseudo == 1);
    CHECK(stats.not_executable == 1);
    CHECK(stats.anonymous == 1);
    CHECK(stats.malformed == 2);
    // Every well-formed line, pseudo ones included (the vDSO is found so).
    auto all = parse_maps(text);
    REQUIRE(all.size() == 4);
    CHECK(all[1].path == "[vdso]");
  }

  TEST_CASE("jit timeline: entries round-trip; bad lines counted") {
    std::vector<TimedJitEntry> entries = {
        {0x7f0000001000ULL, 0x40, 0x10, UINT64_MAX, "LazyCompile:*fib a.js:3"},
        {0x2000, 0x10, 5, 9, "moved"},
    };
    const std::string text = format_jit_timeline(entries);
    CHECK(text ==
          "7f0000001000 40 10 ffffffffffffffff LazyCompile:*fib a.js:3\n"
          "2000 10 5 9 moved\n");
    size_t bad = 0;
    auto back = parse_jit_timeline(text + "1 2 9 5 backwards\n1 2 3\n", &bad);
    REQUIRE(back.size() == 2);
    CHECK(back[0].to == UINT64_MAX);
    CHECK(back[0].name == entries[0].name);
    CHECK(back[1].from == 5);
    CHECK(back[1].to == 9);
    CHECK(bad == 2);
  }

  TEST_CASE("perf map: entries round-trip; 0x prefixes and spaces read") {
    std::vector<PerfMapEntry> entries = {
        {0x7f0000001000ULL, 0x40, "LazyCompile:*fib /app/fib.js:3"},
        {0x2000, 0x10, "stub"},
    };
    const std::string text = format_perf_map(entries);
    CHECK(text ==
          "7f0000001000 40 LazyCompile:*fib /app/fib.js:3\n2000 10 stub\n");
    size_t bad = 0;
    auto back = parse_perf_map(text, &bad);
    REQUIRE(back.size() == 2);
    CHECK(back[0].name == entries[0].name);
    CHECK(back[1].start == 0x2000);
    CHECK(bad == 0);

    auto prefixed = parse_perf_map("0x10 0x8 jitted\nnot a line\n1 2\n", &bad);
    REQUIRE(prefixed.size() == 1);
    CHECK(prefixed[0].start == 0x10);
    CHECK(prefixed[0].size == 8);
    CHECK(bad == 2);
  }
}

}  // namespace
}  // namespace runner::format
