// ELF reading on real binaries, cross-checked with readelf / addr2line /
// eu-addr2line: summary, symbols, unwind sections, separate debug
// files, debug info, and the system's libc / ld-linux.
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "symbols/symbols.hpp"
#include "test_util.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::symbols {
namespace {

using testing::prog_cpp;
using testing::prog_nopie;
using testing::prog_pie;
using testing::run;
using testing::shell_quote;
using testing::split_lines;
using testing::split_ws;

const DebugSearch kNoDebugRoots{.roots = {}};

uint64_t parse_num(const std::string& text, int base) {
  return std::stoull(text, nullptr, base);
}

struct ReadelfSymbol {
  uint64_t value = 0, size = 0;
  std::string name, ndx, type;
};

// `readelf -sW`: .symtab and .dynsym, names without "@VERSION (n)" display
// suffixes for .dynsym (they are not part of the symbol name there).
std::vector<ReadelfSymbol> readelf_symbols(const std::string& path) {
  std::vector<ReadelfSymbol> out;
  bool dynsym = false;
  for (const std::string& line :
       split_lines(run("readelf -sW " + shell_quote(path)))) {
    if (line.find("Symbol table '") != std::string::npos) {
      dynsym = line.find("'.dynsym'") != std::string::npos;
      continue;
    }
    std::vector<std::string> f = split_ws(line);
    if (f.size() < 7 || f[0].back() != ':' || f[0] == "Num:") continue;
    ReadelfSymbol s;
    s.value = parse_num(f[1], 16);
    s.size =
        f[2].rfind("0x", 0) == 0 ? parse_num(f[2], 16) : parse_num(f[2], 10);
    s.type = f[3];
    s.ndx = f[6];
    if (f.size() >= 8) s.name = f[7];
    if (dynsym) s.name = s.name.substr(0, s.name.find('@'));
    out.push_back(s);
  }
  return out;
}

struct ReadelfSection {
  uint64_t addr = 0, offset = 0, size = 0;
};

std::map<std::string, ReadelfSection> readelf_sections(
    const std::string& path) {
  std::map<std::string, ReadelfSection> out;
  for (const std::string& line :
       split_lines(run("readelf -SW " + shell_quote(path)))) {
    size_t bracket = line.find(']');
    if (line.find('[') == std::string::npos || bracket == std::string::npos)
      continue;
    std::vector<std::string> f = split_ws(line.substr(bracket + 1));
    if (f.size() < 5 || f[0] == "Name") continue;
    out[f[0]] = ReadelfSection{parse_num(f[2], 16), parse_num(f[3], 16),
                               parse_num(f[4], 16)};
  }
  return out;
}

std::string readelf_build_id(const std::string& path) {
  for (const std::string& line :
       split_lines(run("readelf -nW " + shell_quote(path)))) {
    size_t pos = line.find("Build ID: ");
    if (pos != std::string::npos) return line.substr(pos + 10);
  }
  return "";
}

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string out;
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    out += buf;
  }
  return out;
}

const Symbol* find_symbol(const std::vector<Symbol>& symbols,
                          const std::string& name) {
  for (const Symbol& s : symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void check_symbols_against_readelf(const std::string& path) {
  CAPTURE(path);
  auto symbols = read_symbols(path, kNoDebugRoots);
  REQUIRE(symbols);
  REQUIRE_FALSE(symbols->empty());
  std::vector<ReadelfSymbol> reference = readelf_symbols(path);
  REQUIRE_FALSE(reference.empty());

  std::set<std::pair<uint64_t, std::string>> reference_pairs;
  for (const ReadelfSymbol& r : reference) {
    if (!r.name.empty()) reference_pairs.insert({r.value, r.name});
  }
  std::multimap<std::pair<uint64_t, std::string>, uint64_t> ours;
  for (size_t i = 0; i < symbols->size(); ++i) {
    const Symbol& s = (*symbols)[i];
    CHECK(s.size != 0);
    CHECK_FALSE(s.name.empty());
    if (i > 0) CHECK((*symbols)[i - 1].addr <= s.addr);
    // PLT entries are named from relocations (names_test.cpp checks them
    // against objdump).
    if (s.name.ends_with("@plt")) continue;
    CHECK_MESSAGE(reference_pairs.count({s.addr, s.name}) == 1,
                  "not in readelf: ", s.name);
    ours.insert({{s.addr, s.name}, s.size});
  }
  // Every sized, named, defined readelf symbol is ours with the same size
  // (imports, absolute symbols and FILE/SECTION/TLS entries never are).
  size_t sized = 0;
  for (const ReadelfSymbol& r : reference) {
    if (r.name.empty() || r.size == 0 || r.ndx == "UND" || r.ndx == "ABS" ||
        r.ndx == "COM" || r.type == "FILE" || r.type == "SECTION" ||
        r.type == "TLS")
      continue;
    ++sized;
    auto [lo, hi] = ours.equal_range({r.value, r.name});
    bool found = false;
    for (auto it = lo; it != hi; ++it) found |= it->second == r.size;
    CHECK_MESSAGE(found, "missing from ours: ", r.name);
  }
  CHECK(sized > 5);
}

std::string slurp(const std::string& path) {
  auto content = base::read_file(path);
  REQUIRE(content);
  return *content;
}

// A stripped copy of the PIE test program plus its objcopy debug file.
struct StrippedProgram {
  runner::testing::TempDir dir;
  std::string bin_dir, stripped, debug_file;

  StrippedProgram() {
    bin_dir = dir.file("bin");
    std::filesystem::create_directories(bin_dir);
    std::filesystem::create_directories(dir.file("work"));
    debug_file = dir.file("work/prog.debug");
    stripped = bin_dir + "/prog";
    run("objcopy --only-keep-debug " + shell_quote(prog_pie()) + " " +
        shell_quote(debug_file));
    run("objcopy --strip-all " + shell_quote(prog_pie()) + " " +
        shell_quote(stripped));
    run("objcopy --add-gnu-debuglink=" + shell_quote(debug_file) + " " +
        shell_quote(stripped));
  }
  void copy_debug_to(const std::string& path) const {
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    std::filesystem::copy_file(
        debug_file, path, std::filesystem::copy_options::overwrite_existing);
  }
};

struct Addr2lineResult {
  std::string outermost;  // "file:line" of the outermost (non-inlined) frame
  size_t frames = 0;      // inline chain length
};

bool have_llvm_symbolizer() {
  return std::system("command -v llvm-symbolizer >/dev/null 2>&1") == 0;
}

bool built_by_clang(const std::string& path) {
  return run("readelf -p .comment " + shell_quote(path))
             .find("clang version") != std::string::npos;
}

std::string hex_addrs(const std::vector<uint64_t>& addrs) {
  std::string out;
  for (uint64_t a : addrs) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), " 0x%llx",
                  static_cast<unsigned long long>(a));
    out += buf;
  }
  return out;
}

// Source locations with inline chains from a reference symbolizer:
// llvm-symbolizer when installed (reads gcc's and clang's DWARF 5, inline
// chains included), else GNU addr2line (binutils; misses some of clang's
// inline ranges). Line 0 / unknown lines are normalised to ":0".
std::vector<Addr2lineResult> addr2line(const std::string& path,
                                       const std::vector<uint64_t>& addrs) {
  std::vector<Addr2lineResult> out;
  if (have_llvm_symbolizer()) {
    // One block of "file:line:col" frames (innermost first) per address,
    // blocks separated by an empty line.
    std::string text =
        run("llvm-symbolizer --inlining --functions=none --obj=" +
            shell_quote(path) + hex_addrs(addrs));
    bool open = false;
    for (std::string line : split_lines(text)) {
      if (line.empty()) {
        open = false;
        continue;
      }
      if (!open) out.emplace_back();
      open = true;
      line.erase(line.rfind(':'));  // column
      out.back().outermost = line;
      ++out.back().frames;
    }
    return out;
  }
  // "0x<addr>" then one "file:line" per frame, innermost first, optionally
  // followed by " (discriminator N)"; "?" for an unknown line.
  for (std::string line : split_lines(
           run("addr2line -a -i -e " + shell_quote(path) + hex_addrs(addrs)))) {
    if (line.rfind("0x", 0) == 0) {
      out.emplace_back();
      continue;
    }
    if (out.empty()) continue;
    size_t disc = line.find(" (discriminator");
    if (disc != std::string::npos) line.erase(disc);
    if (line.ends_with(":?")) line.back() = '0';
    out.back().outermost = line;
    ++out.back().frames;
  }
  return out;
}

int known_function_line() {
  std::ifstream in(testing::env_path("SYMBOLS_PROG_C_SOURCE"));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find("KNOWN_FUNCTION_LINE") != std::string::npos) return n;
  }
  FAIL("marker not found in prog.c");
  return 0;
}

struct LoadedObject {
  std::string name;
  uint64_t bias = 0;
};

std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* objects = static_cast<std::vector<LoadedObject>*>(data);
        objects->push_back({info->dlpi_name != nullptr ? info->dlpi_name : "",
                            info->dlpi_addr});
        return 0;
      },
      &out);
  return out;
}

std::string loaded_path(const std::string& needle) {
  for (const LoadedObject& o : loaded_objects()) {
    if (o.name.find(needle) != std::string::npos) return o.name;
  }
  return "";
}

TEST_SUITE("symbols") {
  TEST_CASE("elf summary matches readelf (build id, PT_LOADs, base_svma)") {
    for (const std::string& path : {prog_pie(), prog_nopie()}) {
      CAPTURE(path);
      auto summary = read_elf_summary(path);
      REQUIRE(summary);
      CHECK(hex(summary->build_id) == readelf_build_id(path));
      CHECK_FALSE(summary->build_id.empty());
      std::vector<uint64_t> load_vaddrs;
      for (const std::string& line :
           split_lines(run("readelf -lW " + shell_quote(path)))) {
        std::vector<std::string> f = split_ws(line);
        if (f.size() >= 3 && f[0] == "LOAD")
          load_vaddrs.push_back(parse_num(f[2], 16));
      }
      REQUIRE(summary->loads.size() == load_vaddrs.size());
      for (size_t i = 0; i < load_vaddrs.size(); ++i) {
        CHECK(summary->loads[i].vaddr == load_vaddrs[i]);
      }
      CHECK(summary->base_svma == load_vaddrs.front());
      CHECK(summary->has_debug_info);
      CHECK(summary->debuglink.empty());
    }
    CHECK(read_elf_summary(prog_nopie())->base_svma == 0x400000);
    CHECK(read_elf_summary(prog_pie())->base_svma == 0);
  }

  TEST_CASE("symbols of test programs match readelf -sW") {
    check_symbols_against_readelf(prog_pie());
    check_symbols_against_readelf(prog_nopie());
    check_symbols_against_readelf(prog_cpp());

    auto nopie = read_symbols(prog_nopie(), kNoDebugRoots);
    REQUIRE(nopie);
    const Symbol* known = find_symbol(*nopie, "known_function");
    REQUIRE(known != nullptr);
    CHECK(known->addr >= 0x400000);
    auto pie = read_symbols(prog_pie(), kNoDebugRoots);
    REQUIRE(pie);
    const Symbol* pie_main = find_symbol(*pie, "main");
    REQUIRE(pie_main != nullptr);
    CHECK(pie_main->addr < 0x100000);
    CHECK(find_symbol(*pie, "static_helper") != nullptr);  // local symbols kept
    auto cpp = read_symbols(prog_cpp(), kNoDebugRoots);
    REQUIRE(cpp);
    CHECK(find_symbol(*cpp, "_ZN4demo5outerEi") != nullptr);  // no demangling
  }

  TEST_CASE("unwind sections match readelf -SW and the file bytes") {
    for (const std::string& path : {prog_pie(), prog_nopie(), prog_cpp()}) {
      CAPTURE(path);
      auto unwind = read_unwind_data(path, "/recorded" + path);
      REQUIRE(unwind);
      CHECK(unwind->path == "/recorded" + path);
      CHECK(unwind->base_svma == read_elf_summary(path)->base_svma);
      auto sections = readelf_sections(path);
      REQUIRE(sections.count(".eh_frame") == 1);
      REQUIRE(sections.count(".eh_frame_hdr") == 1);
      std::string file = slurp(path);
      const ReadelfSection& eh = sections[".eh_frame"];
      CHECK(unwind->eh_frame_svma == Range{eh.addr, eh.addr + eh.size});
      CHECK(std::string(unwind->eh_frame.begin(), unwind->eh_frame.end()) ==
            file.substr(eh.offset, eh.size));
      const ReadelfSection& hdr = sections[".eh_frame_hdr"];
      REQUIRE(unwind->eh_frame_hdr.has_value());
      REQUIRE(unwind->eh_frame_hdr_svma.has_value());
      CHECK(*unwind->eh_frame_hdr_svma == Range{hdr.addr, hdr.addr + hdr.size});
      CHECK(std::string(unwind->eh_frame_hdr->begin(),
                        unwind->eh_frame_hdr->end()) ==
            file.substr(hdr.offset, hdr.size));
    }
  }

  TEST_CASE(
      "ELF without .eh_frame_hdr still has unwind data; without .eh_frame "
      "none") {
    runner::testing::TempDir dir;
    std::string no_hdr = dir.file("no_hdr"), none = dir.file("none");
    run("objcopy --remove-section=.eh_frame_hdr " + shell_quote(prog_pie()) +
        " " + shell_quote(no_hdr));
    run("objcopy --remove-section=.eh_frame_hdr --remove-section=.eh_frame " +
        shell_quote(prog_pie()) + " " + shell_quote(none));
    auto unwind = read_unwind_data(no_hdr, no_hdr);
    REQUIRE(unwind);
    CHECK_FALSE(unwind->eh_frame_hdr.has_value());
    CHECK_FALSE(unwind->eh_frame_hdr_svma.has_value());
    CHECK_FALSE(unwind->eh_frame.empty());
    auto missing = read_unwind_data(none, none);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message().find("eh_frame") != std::string::npos);
  }

  TEST_CASE(
      "separate debug file: build-id and debuglink lookups, CRC checked") {
    StrippedProgram prog;
    auto summary = read_elf_summary(prog.stripped);
    REQUIRE(summary);
    CHECK_FALSE(summary->has_debug_info);
    CHECK(summary->debuglink == "prog.debug");
    CHECK(summary->build_id == read_elf_summary(prog_pie())->build_id);
    std::string id = hex(summary->build_id);

    SUBCASE("build-id path") {
      std::string root = prog.dir.file("root");
      std::string expected = root + "/.build-id/" + id.substr(0, 2) + "/" +
                             id.substr(2) + ".debug";
      prog.copy_debug_to(expected);
      auto found = find_debug_file(prog.stripped, *summary,
                                   DebugSearch{.roots = {root}});
      REQUIRE(found.has_value());
      CHECK(*found == expected);
      // Missing roots are skipped.
      found =
          find_debug_file(prog.stripped, *summary,
                          DebugSearch{.roots = {prog.dir.file("nope"), root}});
      CHECK(found == expected);
    }
    SUBCASE("debuglink next to the file and in .debug/") {
      DebugSearch none{.roots = {prog.dir.file("nope")}};
      CHECK_FALSE(find_debug_file(prog.stripped, *summary, none).has_value());
      prog.copy_debug_to(prog.bin_dir + "/.debug/prog.debug");
      CHECK(find_debug_file(prog.stripped, *summary, none) ==
            prog.bin_dir + "/.debug/prog.debug");
      prog.copy_debug_to(prog.bin_dir + "/prog.debug");
      CHECK(find_debug_file(prog.stripped, *summary, none) ==
            prog.bin_dir + "/prog.debug");
    }
    SUBCASE("debuglink under a debug root") {
      std::string root = prog.dir.file("root2");
      std::string expected = root + prog.bin_dir + "/prog.debug";
      prog.copy_debug_to(expected);
      CHECK(find_debug_file(prog.stripped, *summary,
                            DebugSearch{.roots = {root}}) == expected);
    }
    SUBCASE("wrong CRC is rejected") {
      std::string bad = prog.bin_dir + "/prog.debug";
      prog.copy_debug_to(bad);
      {
        std::ofstream out(bad, std::ios::app | std::ios::binary);
        out << "x";
      }
      CHECK_FALSE(
          find_debug_file(prog.stripped, *summary, DebugSearch{.roots = {}})
              .has_value());
    }
  }

  TEST_CASE("stripped binary gets its symbols back from the debug file") {
    StrippedProgram prog;
    auto alone = read_symbols(prog.stripped, kNoDebugRoots);
    if (alone) CHECK(find_symbol(*alone, "known_function") == nullptr);

    auto id = hex(read_elf_summary(prog.stripped)->build_id);
    std::string root = prog.dir.file("root");
    prog.copy_debug_to(root + "/.build-id/" + id.substr(0, 2) + "/" +
                       id.substr(2) + ".debug");
    auto merged = read_symbols(prog.stripped, DebugSearch{.roots = {root}});
    REQUIRE(merged);
    auto full = read_symbols(prog_pie(), kNoDebugRoots);
    REQUIRE(full);
    const Symbol* known = find_symbol(*merged, "known_function");
    REQUIRE(known != nullptr);
    CHECK(known->addr == find_symbol(*full, "known_function")->addr);
    CHECK(known->size == find_symbol(*full, "known_function")->size);
    // The same (address, size, name) triples: the debug file's sections
    // bound sizes exactly as the unstripped file's do.
    std::set<std::tuple<uint64_t, uint64_t, std::string>> a, b;
    for (const Symbol& s : *merged) a.insert({s.addr, s.size, s.name});
    for (const Symbol& s : *full) b.insert({s.addr, s.size, s.name});
    std::string only_merged, only_full;
    for (const auto& e : a)
      if (!b.count(e)) only_merged += " " + std::get<2>(e);
    for (const auto& e : b)
      if (!a.count(e)) only_full += " " + std::get<2>(e);
    INFO("only in stripped+debug:", only_merged,
         "\nonly in unstripped:", only_full);
    CHECK(a == b);

    // Same through the debuglink (no build-id tree).
    std::filesystem::remove_all(root);
    prog.copy_debug_to(prog.bin_dir + "/.debug/prog.debug");
    auto via_link = read_symbols(prog.stripped, kNoDebugRoots);
    REQUIRE(via_link);
    CHECK(find_symbol(*via_link, "known_function") != nullptr);
  }

  TEST_CASE("debug info: known function's file and line") {
    int expected_line = known_function_line();
    for (const std::string& path : {prog_pie(), prog_nopie()}) {
      CAPTURE(path);
      auto symbols = read_symbols(path, kNoDebugRoots);
      REQUIRE(symbols);
      auto info =
          read_debug_info(path, "/recorded/prog", *symbols, kNoDebugRoots);
      REQUIRE(info);
      CHECK(info->object_path == "/recorded/prog");
      const DebugInfoEntry* entry = nullptr;
      for (const DebugInfoEntry& e : info->entries) {
        if (e.name == "known_function") entry = &e;
      }
      REQUIRE(entry != nullptr);
      CHECK(entry->file.ends_with("programs/prog.c"));
      REQUIRE(entry->line.has_value());
      CHECK(*entry->line == static_cast<uint32_t>(expected_line));
      // Same answer from addr2line.
      auto reference = addr2line(path, {entry->addr});
      REQUIRE(reference.size() == 1);
      CHECK(reference[0].outermost ==
            entry->file + ":" + std::to_string(*entry->line));
      // eu-addr2line too, when it can resolve the file (elfutils 0.188 finds
      // no CU in clang's DWARF 5 without .debug_aranges: "??:0").
      char addr[32];
      std::snprintf(addr, sizeof(addr), "0x%llx",
                    static_cast<unsigned long long>(entry->addr));
      std::string eu =
          run("eu-addr2line -e " + shell_quote(path) + " " + addr + " || true");
      if (eu.rfind("??", 0) != 0) {
        CHECK(eu.rfind(entry->file + ":" + std::to_string(*entry->line), 0) ==
              0);
      }
      // Bounds and order.
      for (size_t i = 1; i < info->entries.size(); ++i) {
        CHECK(info->entries[i - 1].addr <= info->entries[i].addr);
      }
      CHECK(info->addr_min == info->entries.front().addr);
      CHECK(info->addr_max >= entry->addr + entry->size);
    }
  }

  TEST_CASE("debug info: outermost non-inlined frame matches addr2line -i") {
    std::string path = prog_cpp();
    auto symbols = read_symbols(path, kNoDebugRoots);
    REQUIRE(symbols);
    auto info = read_debug_info(path, path, *symbols, kNoDebugRoots);
    REQUIRE(info);
    REQUIRE(info->entries.size() >= 4);
    std::vector<uint64_t> addrs;
    for (const DebugInfoEntry& e : info->entries) addrs.push_back(e.addr);
    std::vector<Addr2lineResult> reference = addr2line(path, addrs);
    REQUIRE(reference.size() == info->entries.size());
    for (size_t i = 0; i < reference.size(); ++i) {
      const DebugInfoEntry& e = info->entries[i];
      std::string ours =
          e.file + ":" + (e.line ? std::to_string(*e.line) : "0");
      CHECK_MESSAGE(ours == reference[i].outermost, e.name);
    }

    // Probe addresses inside prog.cpp's functions too (instrumented builds
    // rarely start a function with inlined code): every probe must match,
    // and some must sit in inlined code so the chain walk is exercised.
    std::vector<Symbol> probes;
    for (const DebugInfoEntry& e : info->entries) {
      if (!e.file.ends_with("prog.cpp")) continue;
      uint64_t step = std::max<uint64_t>(1, e.size / 32);
      for (uint64_t off = 0; off < e.size; off += step) {
        probes.push_back(Symbol{e.addr + off, 1, e.name});
      }
    }
    REQUIRE(probes.size() > 20);
    if (!have_llvm_symbolizer() && built_by_clang(path))
      RUNNER_SKIP_CASE(
          "llvm-symbolizer not installed and GNU addr2line misses clang's "
          "inline chains: probe comparison not made");
    auto probed = read_debug_info(path, path, probes, kNoDebugRoots);
    REQUIRE(probed);
    std::map<uint64_t, std::string> ours_by_addr;
    for (const DebugInfoEntry& e : probed->entries) {
      ours_by_addr[e.addr] =
          e.file + ":" + (e.line ? std::to_string(*e.line) : "0");
    }
    addrs.clear();
    for (const Symbol& p : probes) addrs.push_back(p.addr);
    reference = addr2line(path, addrs);
    REQUIRE(reference.size() == probes.size());
    size_t inlined_seen = 0;
    for (size_t i = 0; i < probes.size(); ++i) {
      CAPTURE(probes[i].addr);
      auto it = ours_by_addr.find(probes[i].addr);
      if (reference[i].outermost.rfind("??:", 0) == 0) {
        CHECK(it == ours_by_addr.end());
        continue;
      }
      REQUIRE(it != ours_by_addr.end());
      CHECK(it->second == reference[i].outermost);
      if (reference[i].frames > 1) ++inlined_seen;
    }
    CHECK(inlined_seen >= 1);
  }

  TEST_CASE("debug info through a separate debug file") {
    StrippedProgram prog;
    prog.copy_debug_to(prog.bin_dir + "/.debug/prog.debug");
    auto symbols = read_symbols(prog.stripped, kNoDebugRoots);
    REQUIRE(symbols);
    auto info =
        read_debug_info(prog.stripped, prog.stripped, *symbols, kNoDebugRoots);
    REQUIRE(info);
    bool found = false;
    for (const DebugInfoEntry& e : info->entries) {
      if (e.name == "known_function") {
        found = true;
        CHECK(e.line == static_cast<uint32_t>(known_function_line()));
      }
    }
    CHECK(found);
    // Without the debug file there is no DWARF at all.
    std::filesystem::remove(prog.bin_dir + "/.debug/prog.debug");
    CHECK_FALSE(
        read_debug_info(prog.stripped, prog.stripped, *symbols, kNoDebugRoots));
  }

  TEST_CASE("system libc.so.6 and ld-linux") {
    std::string libc = loaded_path("libc.so.6");
    std::string ld = loaded_path("ld-linux");
    REQUIRE_FALSE(libc.empty());
    REQUIRE_FALSE(ld.empty());
    for (const std::string& path : {libc, ld}) {
      CAPTURE(path);
      auto symbols = read_symbols(path, DebugSearch{});
      REQUIRE(symbols);
      CHECK(symbols->size() > 20);
      auto unwind = read_unwind_data(path, path);
      REQUIRE(unwind);
      CHECK(unwind->eh_frame.size() > 1000);
      CHECK(unwind->eh_frame_hdr.has_value());
    }
    auto libc_symbols = read_symbols(libc, DebugSearch{});
    REQUIRE(libc_symbols);
    CHECK(find_symbol(*libc_symbols, "malloc") != nullptr);
    auto summary = read_elf_summary(libc);
    REQUIRE(summary);
    if (find_debug_file(libc, *summary, DebugSearch{})) {
      // libc6-dbg installed: local symbols come from the debug file, and
      // DWARF gives source locations.
      CHECK(find_symbol(*libc_symbols, "_int_malloc") != nullptr);
      auto info = read_debug_info(libc, libc, *libc_symbols, DebugSearch{});
      REQUIRE(info);
      bool malloc_found = false;
      for (const DebugInfoEntry& e : info->entries) {
        if (e.name == "_int_malloc") {
          malloc_found = true;
          CHECK(e.file.find("malloc.c") != std::string::npos);
        }
      }
      CHECK(malloc_found);
    } else {
      MESSAGE("libc6-dbg not installed: libc debug info not checked");
    }
  }

  TEST_CASE("bad files give errors, not crashes") {
    runner::testing::TempDir dir;
    std::string text = dir.file("text"), empty = dir.file("empty"),
                cut = dir.file("cut");
    REQUIRE(
        base::write_file_atomic(text, std::string_view("hello, not an ELF\n")));
    REQUIRE(base::write_file_atomic(empty, std::string_view("")));
    std::string full = slurp(prog_pie());
    CHECK_FALSE(read_symbols(text, kNoDebugRoots));
    CHECK_FALSE(read_symbols(empty, kNoDebugRoots));
    CHECK_FALSE(read_symbols(dir.file("missing"), kNoDebugRoots));
    CHECK(read_symbols(dir.file("missing"), kNoDebugRoots).error().code() ==
          ENOENT);
    CHECK_FALSE(read_elf_summary(dir.path()));
    // Every prefix of a real ELF either parses consistently or fails cleanly.
    for (size_t len :
         {size_t{1}, size_t{4}, size_t{16}, size_t{63}, size_t{64}, size_t{200},
          size_t{1000}, size_t{4096}, full.size() / 2, full.size() - 1}) {
      CAPTURE(len);
      REQUIRE(
          base::write_file_atomic(cut, std::string_view(full).substr(0, len)));
      auto summary = read_elf_summary(cut);
      CHECK_FALSE(summary);
      CHECK_FALSE(read_symbols(cut, kNoDebugRoots));
      CHECK_FALSE(read_unwind_data(cut, cut));
      CHECK_FALSE(read_debug_info(cut, cut, {}, kNoDebugRoots));
    }
  }
}

}  // namespace
}  // namespace runner::symbols
