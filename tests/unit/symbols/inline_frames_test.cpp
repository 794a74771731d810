// InlineResolver on real -O2 -g programs, cross-checked against
// eu-addr2line -i (elfutils' own inline chain walk).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "symbols/symbols.hpp"
#include "test_util.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::symbols {
namespace {

using testing::prog_cpp;
using testing::prog_inline;
using testing::run;
using testing::shell_quote;
using testing::split_lines;

const DebugSearch kNoDebugRoots{.roots = {}};

std::vector<std::string> names(const std::vector<InlineFrame>& frames) {
  std::vector<std::string> out;
  for (const InlineFrame& f : frames) out.push_back(f.name);
  return out;
}

// The error text of a failed result ("" when it holds a value): doctest may
// build assertion messages for passing checks too.
template <typename T>
std::string error_of(const base::Result<T>& result) {
  return result ? std::string() : result.error().what();
}

const Symbol* find_symbol(const std::vector<Symbol>& symbols,
                          const std::string& name) {
  for (const Symbol& s : symbols)
    if (s.name == name) return &s;
  return nullptr;
}

// eu-addr2line -a -f -i: per address, the function names of its frames,
// innermost first (the last one is the containing real function). Empty
// chains where eu-addr2line knows nothing ("??").
std::map<uint64_t, std::vector<std::string>> eu_addr2line(
    const std::string& path, const std::vector<uint64_t>& addrs) {
  std::string command = "eu-addr2line -a -f -i -e " + shell_quote(path);
  for (uint64_t a : addrs) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), " 0x%llx",
                  static_cast<unsigned long long>(a));
    command += buf;
  }
  std::map<uint64_t, std::vector<std::string>> out;
  std::vector<std::string>* current = nullptr;
  size_t line_in_entry = 0;
  for (const std::string& line : split_lines(run(command))) {
    if (line.rfind("0x", 0) == 0) {
      current = &out[std::stoull(line, nullptr, 16)];
      line_in_entry = 0;
      continue;
    }
    if (current == nullptr) continue;
    // Name and location lines alternate.
    if (line_in_entry++ % 2 != 0) continue;
    std::string name = line.substr(0, line.find(" inlined at "));
    if (name == "??") continue;
    current->push_back(name);
  }
  return out;
}

}  // namespace

TEST_SUITE("symbols") {
  TEST_CASE("inline frames: two nested always_inline functions") {
    auto resolver = InlineResolver::open(prog_inline(), kNoDebugRoots);
    REQUIRE_MESSAGE(resolver, error_of(resolver));
    CHECK(resolver->dwarf_path() == prog_inline());
    auto symbols = read_symbols(prog_inline(), kNoDebugRoots);
    REQUIRE(symbols);
    const Symbol* inner = find_symbol(*symbols, "inline_inner_marker");
    const Symbol* outer = find_symbol(*symbols, "inline_outer_marker");
    const Symbol* host = find_symbol(*symbols, "inline_host");
    REQUIRE(inner != nullptr);
    REQUIRE(outer != nullptr);
    REQUIRE(host != nullptr);

    CHECK(names(resolver->at(inner->addr)) ==
          std::vector<std::string>{"inline_inner", "inline_outer"});
    CHECK(names(resolver->at(outer->addr)) ==
          std::vector<std::string>{"inline_outer"});
    // Outside any DWARF-described code: nothing.
    CHECK(resolver->at(0).empty());
    CHECK(resolver->at(UINT64_MAX - 1).empty());

    // Every byte of the host function (and its markers, which split it in
    // the symbol table) agrees with eu-addr2line's inline chain.
    uint64_t start = host->addr;
    uint64_t end = std::max({host->addr + host->size, inner->addr + inner->size,
                             outer->addr + outer->size});
    std::vector<uint64_t> addrs;
    for (uint64_t a = start; a < end; ++a) addrs.push_back(a);
    auto reference = eu_addr2line(prog_inline(), addrs);
    size_t compared = 0, two_deep = 0;
    for (uint64_t a : addrs) {
      CAPTURE(a);
      const auto& chain = reference[a];
      if (chain.empty()) continue;  // clang DWARF 5: eu-addr2line sees no CU
      ++compared;
      std::vector<std::string> expected(chain.begin(), chain.end() - 1);
      auto ours = names(resolver->at(a));
      CHECK(ours == expected);
      if (ours.size() == 2) ++two_deep;
    }
    if (compared == 0) {
      MESSAGE("eu-addr2line resolves nothing here: comparison skipped");
    } else {
      CHECK(two_deep >= 1);
    }
  }

  TEST_CASE("inline frames: C++ names are linkage names") {
    auto resolver = InlineResolver::open(prog_cpp(), kNoDebugRoots);
    REQUIRE_MESSAGE(resolver, error_of(resolver));
    auto symbols = read_symbols(prog_cpp(), kNoDebugRoots);
    REQUIRE(symbols);
    const Symbol* outer = find_symbol(*symbols, "_ZN4demo5outerEi");
    REQUIRE(outer != nullptr);
    std::vector<uint64_t> addrs;
    for (uint64_t a = outer->addr; a < outer->addr + outer->size; ++a)
      addrs.push_back(a);
    auto reference = eu_addr2line(prog_cpp(), addrs);
    size_t square_plus = 0;
    for (uint64_t a : addrs) {
      CAPTURE(a);
      auto ours = names(resolver->at(a));
      for (const auto& name : ours)
        if (name == "_ZN4demo11square_plusEi") ++square_plus;
      const auto& chain = reference[a];
      if (chain.empty()) continue;
      CHECK(ours == std::vector<std::string>(chain.begin(), chain.end() - 1));
    }
    CHECK(square_plus >= 1);
  }

  TEST_CASE("inline frames: no DWARF is an error, a debug file is used") {
    runner::testing::TempDir dir;
    const std::string bin_dir = dir.file("bin");
    std::filesystem::create_directories(bin_dir);
    const std::string stripped = bin_dir + "/prog";
    const std::string debug = dir.file("prog.debug");
    run("objcopy --only-keep-debug " + shell_quote(prog_inline()) + " " +
        shell_quote(debug));
    run("objcopy --strip-debug " + shell_quote(prog_inline()) + " " +
        shell_quote(stripped));
    auto none = InlineResolver::open(stripped, kNoDebugRoots);
    REQUIRE_FALSE(none);
    CHECK(none.error().what().find("no DWARF") != std::string::npos);

    // The same file with a .gnu_debuglink to its debug file in .debug/.
    run("objcopy --add-gnu-debuglink=" + shell_quote(debug) + " " +
        shell_quote(stripped));
    std::filesystem::create_directories(bin_dir + "/.debug");
    std::filesystem::copy_file(debug, bin_dir + "/.debug/prog.debug");
    auto linked = InlineResolver::open(stripped, kNoDebugRoots);
    REQUIRE_MESSAGE(linked, error_of(linked));
    CHECK(linked->dwarf_path() == bin_dir + "/.debug/prog.debug");
    auto symbols = read_symbols(stripped, kNoDebugRoots);
    REQUIRE(symbols);
    const Symbol* inner = find_symbol(*symbols, "inline_inner_marker");
    REQUIRE(inner != nullptr);
    CHECK(names(linked->at(inner->addr)) ==
          std::vector<std::string>{"inline_inner", "inline_outer"});

    // Missing and non-ELF files.
    CHECK_FALSE(InlineResolver::open(dir.file("missing"), kNoDebugRoots));
    REQUIRE(base::write_file_atomic(dir.file("text"),
                                    std::string_view("not an ELF file\n")));
    CHECK_FALSE(InlineResolver::open(dir.file("text"), kNoDebugRoots));
  }
}

}  // namespace runner::symbols
