// Symbol names that never lie: no import is ever a symbol, no symbol covers
// addresses outside the section defining it, PLT entries are "<name>@plt"
// exactly where objdump puts them, and MiniDebugInfo (.gnu_debugdata) names
// the static functions of a stripped binary. Programs are compiled here with
// `cc` from programs/plt.c; readelf and objdump are the references.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "symbols/symbols.hpp"
#include "test_util.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::symbols {
namespace {

using testing::compile_c;
using testing::plt_source;
using testing::run;
using testing::shell_quote;
using testing::split_lines;
using testing::split_ws;

const DebugSearch kNoDebugRoots{.roots = {}};

struct Section {
  std::string name;
  uint64_t addr = 0, size = 0;
  std::string flags;
};

// `readelf -SW`: name, address, size and flags of every section.
std::vector<Section> sections_of(const std::string& path) {
  std::vector<Section> out;
  for (const std::string& line :
       split_lines(run("readelf -SW " + shell_quote(path)))) {
    size_t open = line.find('['), close = line.find(']');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::vector<std::string> f = split_ws(line.substr(close + 1));
    // name type addr off size es [flags] lk inf al
    if (f.size() < 9 || f[0] == "Name") continue;
    out.push_back(Section{f[0], std::stoull(f[2], nullptr, 16),
                          std::stoull(f[4], nullptr, 16),
                          f.size() >= 10 ? f[6] : ""});
  }
  return out;
}

const Section* section_named(const std::vector<Section>& sections,
                             const std::string& name) {
  for (const Section& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

// Names (without @VERSION) of the undefined symbols of .dynsym and .symtab.
std::set<std::string> undefined_names(const std::string& path) {
  std::set<std::string> out;
  for (const std::string& line :
       split_lines(run("readelf -sW " + shell_quote(path)))) {
    std::vector<std::string> f = split_ws(line);
    if (f.size() < 8 || f[0].back() != ':' || f[6] != "UND") continue;
    out.insert(f[7].substr(0, f[7].find('@')));
  }
  return out;
}

// objdump's synthetic "<name@plt>" labels: address -> name@plt.
std::map<uint64_t, std::string> objdump_plt_labels(const std::string& path) {
  std::map<uint64_t, std::string> out;
  for (const std::string& line :
       split_lines(run("objdump -d --no-show-raw-insn " + shell_quote(path)))) {
    size_t lt = line.find(" <");
    if (lt == std::string::npos || !line.ends_with("@plt>:")) continue;
    std::string name = line.substr(lt + 2, line.size() - lt - 4);
    // IRELATIVE slots have no symbol: objdump says "*ABS*+0x...@plt", we
    // leave them unnamed.
    if (name.starts_with("*ABS*")) continue;
    out[std::stoull(line.substr(0, lt), nullptr, 16)] = name;
  }
  return out;
}

std::map<uint64_t, std::string> our_plt_names(
    const std::vector<Symbol>& symbols) {
  std::map<uint64_t, std::string> out;
  for (const Symbol& s : symbols)
    if (s.name.ends_with("@plt")) out[s.addr] = s.name;
  return out;
}

const Symbol* find_symbol(const std::vector<Symbol>& symbols,
                          const std::string& name) {
  for (const Symbol& s : symbols)
    if (s.name == name) return &s;
  return nullptr;
}

// Every symbol lies inside one allocated, non-TLS section of `path`.
void check_inside_sections(const std::vector<Symbol>& symbols,
                           const std::string& path) {
  std::vector<Section> sections = sections_of(path);
  REQUIRE_FALSE(sections.empty());
  for (const Symbol& s : symbols) {
    CAPTURE(s.name);
    CAPTURE(s.addr);
    CAPTURE(s.size);
    CHECK(s.size > 0);
    bool inside = false;
    for (const Section& sec : sections) {
      if (sec.flags.find('A') == std::string::npos ||
          sec.flags.find('T') != std::string::npos)
        continue;
      inside |= sec.addr <= s.addr && s.addr < sec.addr + sec.size &&
                s.size <= sec.addr + sec.size - s.addr;
    }
    CHECK_MESSAGE(inside, "symbol reaches outside its section");
  }
}

void check_no_imports(const std::vector<Symbol>& symbols,
                      const std::set<std::string>& undefined) {
  for (const Symbol& s : symbols) {
    CHECK_MESSAGE(undefined.count(s.name) == 0, "import named: ", s.name);
  }
}

void check_plt_names(const std::vector<Symbol>& symbols,
                     const std::string& path) {
  std::map<uint64_t, std::string> expected = objdump_plt_labels(path);
  CHECK(our_plt_names(symbols) == expected);
  for (const Symbol& s : symbols) {
    if (s.name.ends_with("@plt")) CHECK((s.size == 8 || s.size == 16));
  }
}

struct Layout {
  std::string name, flags;
};

// The PLT layouts GNU ld makes: lazy .plt (+ .plt.got for __cxa_finalize in
// a PIE), IBT (.plt.sec, 16-byte .plt.got), BIND_NOW, and non-PIE; plus
// lld's (.plt without sh_entsize, its own .plt.sec) when it is installed.
std::vector<Layout> layouts() {
  std::vector<Layout> out = {
      {"pie", "-O1"},
      {"ibt", "-O1 -fcf-protection=full -Wl,-z,ibtplt"},
      {"now", "-O1 -Wl,-z,now"},
      {"nopie", "-O1 -fno-pie -no-pie"},
  };
  if (std::system("command -v ld.lld >/dev/null 2>&1") == 0) {
    out.push_back({"lld", "-O1 -fuse-ld=lld"});
    out.push_back(
        {"lld-ibt", "-O1 -fuse-ld=lld -fcf-protection=full -Wl,-z,force-ibt"});
  } else {
    MESSAGE("ld.lld not installed: lld's PLT layouts not checked");
  }
  return out;
}

TEST_SUITE("symbols") {
  TEST_CASE("compiled program: no imports, sections bound sizes, @plt names") {
    runner::testing::TempDir dir;
    for (const Layout& layout : layouts()) {
      CAPTURE(layout.name);
      std::string full = dir.file(layout.name + ".full");
      std::string stripped = dir.file(layout.name + ".stripped");
      compile_c(plt_source(), full, layout.flags);
      run("strip --strip-all -o " + shell_quote(stripped) + " " +
          shell_quote(full));
      std::set<std::string> undefined = undefined_names(full);
      REQUIRE(undefined.count("puts") == 1);
      REQUIRE(undefined.count("qsort") == 1);

      for (const std::string& path : {full, stripped}) {
        CAPTURE(path);
        auto symbols = read_symbols(path, kNoDebugRoots);
        REQUIRE(symbols);
        check_no_imports(*symbols, undefined);
        check_inside_sections(*symbols, path);
        check_plt_names(*symbols, path);
        std::map<uint64_t, std::string> plt = our_plt_names(*symbols);
        std::set<std::string> names;
        for (const auto& [addr, name] : plt) names.insert(name);
        for (const char* name :
             {"puts@plt", "qsort@plt", "strlen@plt", "malloc@plt"})
          CHECK_MESSAGE(names.count(name) == 1, "missing ", name);
      }

      // The zero-size _init fills .init and stops there (stretched to
      // the next symbol, it would swallow the whole PLT).
      auto symbols = read_symbols(full, kNoDebugRoots);
      REQUIRE(symbols);
      std::vector<Section> sections = sections_of(full);
      const Section* init = section_named(sections, ".init");
      REQUIRE(init != nullptr);
      const Symbol* init_symbol = find_symbol(*symbols, "_init");
      REQUIRE(init_symbol != nullptr);
      CHECK(init_symbol->addr == init->addr);
      CHECK(init_symbol->addr + init_symbol->size == init->addr + init->size);
      CHECK(find_symbol(*symbols, "compare_ints") != nullptr);
      CHECK(find_symbol(*symbols, "static_length") != nullptr);
    }
  }

  TEST_CASE("PIE: __cxa_finalize is only its .plt.got entry") {
    runner::testing::TempDir dir;
    std::string stripped = dir.file("prog");
    compile_c(plt_source(), stripped, "-O1 -fpie -pie -s");
    auto symbols = read_symbols(stripped, kNoDebugRoots);
    REQUIRE(symbols);
    CHECK(find_symbol(*symbols, "__cxa_finalize") == nullptr);
    const Symbol* stub = find_symbol(*symbols, "__cxa_finalize@plt");
    REQUIRE(stub != nullptr);
    std::vector<Section> sections = sections_of(stripped);
    const Section* plt_got = section_named(sections, ".plt.got");
    REQUIRE(plt_got != nullptr);
    CHECK(stub->addr >= plt_got->addr);
    CHECK(stub->addr + stub->size <= plt_got->addr + plt_got->size);
  }

  TEST_CASE("/usr/bin/gzip: no import is named, @plt names match objdump") {
    const std::string gzip = "/usr/bin/gzip";
    if (!std::filesystem::is_regular_file(gzip))
      RUNNER_SKIP_CASE(gzip +
                       " is not installed: real stripped binary case "
                       "not run");
    auto symbols = read_symbols(gzip, DebugSearch{});
    REQUIRE(symbols);
    check_no_imports(*symbols, undefined_names(gzip));
    CHECK(find_symbol(*symbols, "__cxa_finalize") == nullptr);
    check_inside_sections(*symbols, gzip);
    check_plt_names(*symbols, gzip);
  }

  TEST_CASE("MiniDebugInfo (.gnu_debugdata) names a stripped file's statics") {
    runner::testing::TempDir dir;
    std::string full = dir.file("full"), stripped = dir.file("stripped"),
                plain = dir.file("plain");
    compile_c(plt_source(), full, "-O1 -g");
    // Fedora's find-debuginfo recipe: the function symbols that .dynsym
    // lacks, kept in an only-keep-debug copy without DWARF, xz-compressed.
    auto q = [&](const std::string& name) {
      return shell_quote(dir.file(name));
    };
    run("nm -D " + shell_quote(full) +
        " --format=posix --defined-only | awk '{ print $1 }' | sort > " +
        q("dynsyms"));
    run("nm " + shell_quote(full) +
        " --format=posix --defined-only | awk '{ if ($2 == \"T\" || $2 == "
        "\"t\" || $2 == \"D\") print $1 }' | sort > " +
        q("funcsyms"));
    run("comm -13 " + q("dynsyms") + " " + q("funcsyms") + " > " +
        q("keep_symbols"));
    run("objcopy --only-keep-debug " + shell_quote(full) + " " + q("debug"));
    run("objcopy -S --remove-section .gdb_index --remove-section .comment "
        "--keep-symbols=" +
        q("keep_symbols") + " " + q("debug") + " " + q("mini_debuginfo"));
    run("xz " + q("mini_debuginfo"));
    run("strip --strip-all -o " + shell_quote(plain) + " " + shell_quote(full));
    run("objcopy --add-section .gnu_debugdata=" + q("mini_debuginfo.xz") + " " +
        shell_quote(plain) + " " + shell_quote(stripped));

    auto reference = read_symbols(full, kNoDebugRoots);
    REQUIRE(reference);
    auto without = read_symbols(plain, kNoDebugRoots);
    REQUIRE(without);
    auto with = read_symbols(stripped, kNoDebugRoots);
    REQUIRE(with);
    for (const char* name : {"compare_ints", "static_length", "main"}) {
      CAPTURE(name);
      CHECK(find_symbol(*without, name) == nullptr);
      const Symbol* expected = find_symbol(*reference, name);
      REQUIRE(expected != nullptr);
      const Symbol* got = find_symbol(*with, name);
      REQUIRE(got != nullptr);
      CHECK(got->addr == expected->addr);
      CHECK(got->size == expected->size);
    }
    check_no_imports(*with, undefined_names(full));
    check_inside_sections(*with, stripped);
    check_plt_names(*with, stripped);
  }
}

}  // namespace
}  // namespace runner::symbols
