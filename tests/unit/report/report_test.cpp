#include <cstdio>
#include <set>
#include <string>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "report/cfi.hpp"
#include "report/flamegraph.hpp"
#include "report/profile_folder.hpp"
#include "report/symbolizer.hpp"
#include "symbols/symbols.hpp"
#include "tests/support/libc.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::report;

namespace {

// `readelf --debug-dump=frames` of a file, through a temp file.
std::string readelf_frames(const std::string& path) {
  runner::testing::TempDir dir;
  std::string out = dir.file("out");
  runner::base::SpawnOptions opts;
  opts.argv = {
      "sh", "-c",
      "readelf --debug-dump=frames '" + path + "' > '" + out + "' 2>/dev/null"};
  auto child = runner::base::ChildProcess::spawn(opts);
  REQUIRE(child);
  REQUIRE(child->wait());
  return runner::base::read_file(out).value_or("");
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("eh_frame FDE lookup covers what readelf lists (libc)") {
    const std::string libc = runner::testing::loaded_libc_path();
    REQUIRE_FALSE(libc.empty());
    auto data = runner::symbols::read_unwind_data(libc, libc);
    REQUIRE(data);
    std::optional<std::vector<uint8_t>> hdr = data->eh_frame_hdr;
    auto eh = EhFrame::create(
        data->eh_frame, data->eh_frame_svma.start, hdr,
        data->eh_frame_hdr_svma ? data->eh_frame_hdr_svma->start : 0);
    REQUIRE(eh);
    CHECK(eh->uses_hdr_table());
    auto fdes = eh->all_fdes();
    // readelf prints one "FDE cie=" line per FDE.
    std::string text = readelf_frames(libc);
    size_t readelf_fdes = 0;
    for (size_t pos = 0;
         (pos = text.find(" FDE cie=", pos)) != std::string::npos; ++pos)
      ++readelf_fdes;
    CHECK(fdes.size() == readelf_fdes);
    size_t found = 0;
    for (const auto& fde : fdes) {
      if (fde.pc_end <= fde.pc_begin) continue;
      auto hit = eh->find_fde(fde.pc_begin);
      if (hit && hit->pc_begin == fde.pc_begin) ++found;
      auto row = eh->find_row(fde.pc_begin);
      CHECK(row.has_value());
    }
    CHECK(found * 100 >= fdes.size() * 99);
  }

  TEST_CASE("demangling matches perf's style (no parameter lists)") {
    CHECK(demangle_symbol("_ZN12_GLOBAL__N_13fibEj") ==
          "(anonymous namespace)::fib");
    CHECK(demangle_symbol("_ZN4core3fmt5write17h1234567890abcdefE") ==
          "core::fmt::write");
    CHECK(demangle_symbol("main") == "main");
    CHECK(demangle_symbol("_Zgarbage") == "_Zgarbage");
  }

  TEST_CASE("symbol table lookup, aliases and enclosing symbols") {
    std::vector<runner::symbols::Symbol> syms = {
        {0x1000, 0x100, "first_alias", 0},
        {0x1000, 0x100, "second", 0},
        {0x1100, 0x10, "small", 0},
        {0x2000, 0x1000, "big", 0},
        {0x2100, 0x10, "inner", 0}};
    ModuleSymbols table(syms);
    REQUIRE(table.find(0x1050) != nullptr);
    CHECK(table.find(0x1050)->name == "first_alias");
    CHECK(table.find(0x1105)->name == "small");
    CHECK(table.find(0x1200) == nullptr);
    CHECK(table.find(0x2105)->name == "inner");
    CHECK(table.find(0x2500)->name == "big");
    CHECK(table.find(0x3000) == nullptr);
    CHECK(table.min_addr() == 0x1000);
    CHECK(table.max_end() == 0x3000);
  }

  TEST_CASE(
      "symbol table: a symbol whose end is past 2^64 (a corrupt map) is "
      "found at its own addresses, and max_end stops at 2^64 - 1") {
    // Found by fuzz_symbols_map: addr + size wrapped to a small number.
    std::vector<runner::symbols::Symbol> syms = {
        {0x1000, 0x10, "low", 0}, {0xfffffffffffffff0, 0x37c, "wraps", 0}};
    ModuleSymbols table(syms);
    REQUIRE(table.find(0xfffffffffffffff0) != nullptr);
    CHECK(table.find(0xfffffffffffffff0)->name == "wraps");
    CHECK(table.find(0xffffffffffffffff)->name == "wraps");
    CHECK(table.find(0x1008)->name == "low");
    CHECK(table.find(0x2000) == nullptr);
    CHECK(table.max_end() == UINT64_MAX);
  }

  TEST_CASE("flamegraph SVG is self-contained and escaped") {
    std::vector<FoldedStack> stacks = {{{"main", "a<b>&c"}, 3},
                                       {{"main", "d"}, 1}};
    std::string svg = render_flamegraph("bench \"x\"", stacks);
    CHECK(svg.rfind("<?xml", 0) == 0);
    CHECK(svg.find("<script") != std::string::npos);
    CHECK(svg.find("a&lt;b&gt;&amp;c (3 samples, 75.00%)") !=
          std::string::npos);
    CHECK(svg.find("bench &quot;x&quot;") != std::string::npos);
    CHECK(svg.find("http://") == svg.find("http://www.w3.org/2000/svg"));
    CHECK(svg.find("</svg>") != std::string::npos);
  }

  TEST_CASE("flamegraph labels are in the SVG text and fit their frame") {
    // The label <text> of the frame named `name` (escaped as written).
    const auto label_of = [](const std::string& svg, const std::string& name) {
      const size_t g = svg.find("<g class=\"f\" data-n=\"" + name + "\"");
      REQUIRE(g != std::string::npos);
      const size_t open = svg.find("\">", svg.find("<text ", g)) + 2;
      return svg.substr(open, svg.find("</text>", open) - open);
    };
    // Frame widths: 1180 px for the whole width; 0.6 em + 5% at 12 px is
    // 7.56 px per ASCII character, 3 px of padding on each side.
    const std::string long_name = "std::" + std::string(300, 'x');
    const std::string wide = "\xc3\xa9\xe2\x9c\x93";  // "é✓": two cells each
    std::vector<FoldedStack> stacks = {
        {{"main", long_name}, 90},
        {{"main", "a<b>&cdefgh"}, 5},
        {{"main", "y\xff" + wide + wide + wide}, 5}};
    std::string svg = render_flamegraph("bench", stacks);
    CHECK(label_of(svg, "main") == "main");
    // 1062 px frame: (1062 - 6) / 7.56 = 139 cells, 137 of them + "..".
    const std::string cut = label_of(svg, "std::" + std::string(300, 'x'));
    CHECK(cut == long_name.substr(0, 137) + "..");
    // 59 px frame: 53 px of text, 7 cells: 5 + "..". Escaping comes after
    // the cut, so no entity is cut through.
    CHECK(label_of(svg, "a&lt;b&gt;&amp;cdefgh") == "a&lt;b&gt;&amp;..");
    // Another 59 px frame, with an invalid byte (written as '?') and
    // two-cell characters: y ? é take 4 cells, ".." 2, ✓ would need 2 more;
    // never cut inside a character.
    const std::string odd = "y?" + wide + wide + wide;
    CHECK(svg.find("data-n=\"" + odd + "\"") != std::string::npos);
    CHECK(label_of(svg, odd) == "y?\xc3\xa9..");
    std::vector<FoldedStack> narrow = {{{"f", std::string(10, 'z') + wide}, 1},
                                       {{"g"}, 199}};
    svg = render_flamegraph("bench", narrow);
    // "f" gets 5.9 px: no room for one cell, so no label; "g" fits whole.
    CHECK(label_of(svg, "f") == "");
    CHECK(label_of(svg, "g") == "g");
    CHECK(svg.find("'DejaVu Sans Mono'") != std::string::npos);
  }

  TEST_CASE("metadata with large debug info members still parses the rest") {
    runner::testing::TempDir dir;
    // Debug info with strings that hold brackets, commas and escaped quotes,
    // before and after the members the report reads.
    const std::string meta = R"({
      "debug_info": {"k": [{"name": "f}\"],{", "file": "a\\"}], "n": 1},
      "mapped_process_module_symbols": {"42": [{"perf_map_key": "0__x",
                                                "load_bias": 4096}]},
      "mapped_process_debug_info_by_pid" : {"42": [{"x": "]]]"}]},
      "path_key_to_path": {"0__x": "/usr/bin/x"}
    })";
    REQUIRE(runner::base::write_file_atomic(dir.file("perf.metadata"), meta));
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE(folder);
    CHECK(folder->has_metadata());
    const PidModules* modules = folder->modules(42);
    REQUIRE(modules != nullptr);
    REQUIRE(modules->symbols.size() == 1);
    CHECK(modules->symbols[0].key == "0__x");
    CHECK(modules->symbols[0].load_bias == 4096);
    CHECK(folder->key_path("0__x") == "/usr/bin/x");
    // A cut that does not apply (unterminated string) falls back to the
    // parser, which rejects the file as a whole.
    REQUIRE(runner::base::write_file_atomic(
        dir.file("perf.metadata"),
        std::string_view(
            R"({"debug_info": {"a": "x}, "path_key_to_path": {}})")));
    auto broken = ProfileFolder::open(dir.path());
    REQUIRE(broken);
    CHECK_FALSE(broken->has_metadata());
  }

  TEST_CASE("a folder with bad artifacts opens with warnings") {
    runner::testing::TempDir dir;
    REQUIRE(runner::base::write_file_atomic(dir.file("perf.metadata"),
                                            std::string_view("{not json")));
    REQUIRE(runner::base::write_file_atomic(
        dir.file("ExecutionTimestamps.msgpack"), std::string_view("\xc1")));
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE(folder);
    CHECK(folder->warnings().size() >= 2);
    CHECK(folder->windows().empty());
    CHECK(folder->symbols("0__missing") == nullptr);
    CHECK(folder->unwind("0__missing") == nullptr);
    CHECK_FALSE(ProfileFolder::open(dir.file("nope")));
  }
}
