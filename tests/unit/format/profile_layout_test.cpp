#include <string>

#include <doctest/doctest.h>

#include "format/format.hpp"

using runner::format::ProfileLayout;

TEST_CASE("ProfileLayout spells every file of a profile folder") {
  const ProfileLayout layout("/p");
  CHECK(layout.folder() == "/p");
  CHECK(layout.pipedata() == "/p/perf.pipedata");
  CHECK(layout.metadata() == "/p/perf.metadata");
  CHECK(layout.execution_timestamps() == "/p/ExecutionTimestamps.msgpack");
  CHECK(layout.symbols_map("0__libc.so.6") == "/p/0__libc.so.6.symbols.map");
  CHECK(layout.unwind_data("3__a.out") == "/p/3__a.out.unwind_data");
  CHECK(layout.perf_map(42) == "/p/perf-42.map");
  CHECK(layout.results_dir() == "/p/results");
  CHECK(layout.report_dir() == "/p/report");
  CHECK(ProfileLayout::jit_perf_map(7) == "/tmp/perf-7.map");
  CHECK(ProfileLayout::result_file_name(1234) == "1234.json");
}

TEST_CASE("module keys: <index>__<file name>, and back") {
  CHECK(ProfileLayout::module_key(0, "/usr/lib/libc.so.6") == "0__libc.so.6");
  CHECK(ProfileLayout::module_key(12, "[vdso]") == "12__[vdso]");
  CHECK(ProfileLayout::module_key(1, "/dir/") == "1__");
  CHECK(ProfileLayout::key_file_name("12__libm.so") == "libm.so");
  CHECK(ProfileLayout::key_file_name("3__a__b") == "a__b");
  CHECK(ProfileLayout::key_file_name("plain") == "plain");
}

TEST_CASE("file stems: [A-Za-z0-9._-] kept, others '_', 100 bytes at most") {
  CHECK(ProfileLayout::file_stem("fib 20/x:y") == "fib_20_x_y");
  CHECK(ProfileLayout::file_stem("a.b-c_D9") == "a.b-c_D9");
  CHECK(ProfileLayout::file_stem("\xC3\xA9") == "__");  // each byte
  CHECK(ProfileLayout::file_stem(std::string(150, 'x')) ==
        std::string(100, 'x'));
  CHECK(ProfileLayout::file_stem("") == "");
}
