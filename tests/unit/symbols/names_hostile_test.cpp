// Hostile input for the symbol names: PLT bytes decoded at every odd
// length, corrupted relocations / .dynsym / PLT sections, and MiniDebugInfo
// (.gnu_debugdata) that is garbage, not an ELF, or an xz bomb past the cap.
// Each gives an error or fewer names, never a crash or a name outside the
// section it claims.
#include <cstdint>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/plt.hpp"
#include "symbols/symbols.hpp"
#include "symbols/xz.hpp"
#include "test_util.hpp"
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

std::vector<uint8_t> bytes_of(const std::string& text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::string slurp(const std::string& path) {
  auto content = base::read_file(path);
  REQUIRE(content);
  return *content;
}

// `xz` of `data` (through a file in `dir`).
std::vector<uint8_t> xz_of(const runner::testing::TempDir& dir,
                           const std::string& data) {
  std::string plain = dir.file("xz-input");
  REQUIRE(base::write_file_atomic(plain, data));
  run("xz -f -T1 " + shell_quote(plain));
  return bytes_of(slurp(plain + ".xz"));
}

struct FileRange {
  std::string name;
  uint64_t addr = 0, offset = 0, size = 0;
};

// File ranges of the named sections of `path` (from readelf -SW).
std::vector<FileRange> section_ranges(const std::string& path,
                                      const std::vector<std::string>& names) {
  std::vector<FileRange> out;
  for (const std::string& line :
       split_lines(run("readelf -SW " + shell_quote(path)))) {
    size_t close = line.find(']');
    if (line.find('[') == std::string::npos || close == std::string::npos)
      continue;
    std::vector<std::string> f = split_ws(line.substr(close + 1));
    if (f.size() < 9) continue;
    for (const std::string& name : names) {
      if (f[0] != name) continue;
      out.push_back(FileRange{name, std::stoull(f[2], nullptr, 16),
                              std::stoull(f[3], nullptr, 16),
                              std::stoull(f[4], nullptr, 16)});
    }
  }
  return out;
}

// read_symbols on a damaged file: an error, or symbols whose "@plt" names
// sit inside a PLT section, every one with a size.
void check_sane(const std::string& path, const std::vector<FileRange>& plts) {
  auto symbols = read_symbols(path, kNoDebugRoots);
  if (!symbols) return;
  for (const Symbol& s : *symbols) {
    CAPTURE(s.name);
    CHECK(s.size > 0);
    if (!s.name.ends_with("@plt")) continue;
    bool inside = false;
    for (const FileRange& r : plts) {
      inside |= r.addr <= s.addr && s.addr + s.size <= r.addr + r.size;
    }
    CHECK(inside);
  }
}

TEST_SUITE("symbols") {
  TEST_CASE("PLT decoding: odd lengths, prefixes and displacements") {
    // Lazy .plt: a 16-byte header, then `jmp *disp(%rip)` entries.
    std::vector<uint8_t> plt(48, 0x90);
    const uint8_t jmp[] = {0xff, 0x25, 0xfa, 0xff, 0xff, 0xff};  // disp -6
    std::copy(std::begin(jmp), std::end(jmp), plt.begin() + 16);
    std::copy(std::begin(jmp), std::end(jmp), plt.begin() + 32);
    auto entries = decode_x86_64_plt(".plt", 0x1000, plt, 16);
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].addr == 0x1010);
    CHECK(entries[0].size == 16);
    CHECK(entries[0].slot == 0x1010);  // 0x1010 + 6 - 6
    CHECK(entries[1].slot == 0x1020);
    // The header is never an entry, even when it holds the jump.
    std::copy(std::begin(jmp), std::end(jmp), plt.begin());
    CHECK(decode_x86_64_plt(".plt", 0x1000, plt, 16).size() == 2);
    // Every truncation: only whole entries, never a read past the end.
    for (size_t len = 0; len <= plt.size(); ++len) {
      CAPTURE(len);
      auto cut = decode_x86_64_plt(
          ".plt", 0x1000, std::span<const uint8_t>(plt).first(len), 16);
      CHECK(cut.size() == (len >= 48 ? 2u : len >= 32 ? 1u : 0u));
    }
    // IBT .plt.sec: endbr64, bnd, jmp; slots wrap like the CPU's arithmetic.
    std::vector<uint8_t> sec = {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0x00,
                                0x00, 0x00, 0x80, 0x0f, 0x1f, 0x44, 0x00, 0x00};
    entries = decode_x86_64_plt(".plt.sec", 0x10, sec, 16);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].slot == 0x10 + 11 - 0x80000000ull);
    for (size_t len = 0; len < sec.size(); ++len) {
      CHECK(decode_x86_64_plt(".plt.sec", 0x10,
                              std::span<const uint8_t>(sec).first(len), 16)
                .empty());
    }
    // .plt.got: 8-byte entries without IBT (by sh_entsize or, when that is
    // unusable, by the first bytes), 16 with it.
    std::vector<uint8_t> got = {0xff, 0x25, 0x02, 0x00, 0x00, 0x00, 0x66, 0x90,
                                0xff, 0x25, 0x02, 0x00, 0x00, 0x00, 0x66, 0x90};
    for (uint64_t entsize : {uint64_t{8}, uint64_t{0}, uint64_t{12345}}) {
      entries = decode_x86_64_plt(".plt.got", 0, got, entsize);
      REQUIRE(entries.size() == 2);
      CHECK(entries[1].addr == 8);
      CHECK(entries[1].size == 8);
      CHECK(entries[1].slot == 16);
    }
    CHECK(decode_x86_64_plt(".plt.got", 0, sec, 0).size() == 1);
    // Not a jump through memory: no entry. Unknown section: nothing.
    std::vector<uint8_t> junk(64, 0xff);
    CHECK(decode_x86_64_plt(".plt.sec", 0, junk, 16).empty());
    CHECK(decode_x86_64_plt(".text", 0, plt, 16).empty());
  }

  TEST_CASE("decompress_xz: garbage, truncation and size cap are errors") {
    runner::testing::TempDir dir;
    CHECK_FALSE(decompress_xz({}, 1024));
    auto garbage = decompress_xz(bytes_of("this is not xz at all"), 1024);
    REQUIRE_FALSE(garbage);
    CHECK(garbage.error().message().find("not xz") != std::string::npos);

    std::string text(100000, 'a');
    for (size_t i = 0; i < text.size(); i += 7) text[i] = char('a' + i % 26);
    std::vector<uint8_t> packed = xz_of(dir, text);
    auto whole = decompress_xz(packed, text.size());
    REQUIRE(whole);
    CHECK(std::string(whole->begin(), whole->end()) == text);
    auto over = decompress_xz(packed, text.size() - 1);
    REQUIRE_FALSE(over);
    CHECK(over.error().message().find("larger than") != std::string::npos);
    for (size_t len :
         {size_t{1}, size_t{12}, packed.size() / 2, packed.size() - 1}) {
      CAPTURE(len);
      CHECK_FALSE(decompress_xz(std::span(packed).first(len), text.size()));
    }
    std::vector<uint8_t> flipped = packed;
    flipped[flipped.size() / 2] ^= 0x55;
    CHECK_FALSE(decompress_xz(flipped, text.size()));
  }

  TEST_CASE("corrupt relocations, .dynsym and PLT sections never crash") {
    runner::testing::TempDir dir;
    std::string original = dir.file("prog"), damaged = dir.file("damaged");
    compile_c(plt_source(), original, "-O1 -s");
    const std::vector<std::string> plt_names = {".plt", ".plt.sec", ".plt.got"};
    std::vector<FileRange> plts = section_ranges(original, plt_names);
    std::vector<FileRange> targets = section_ranges(
        original, {".plt", ".plt.sec", ".plt.got", ".rela.plt", ".rela.dyn",
                   ".dynsym", ".dynstr", ".got", ".got.plt"});
    REQUIRE(targets.size() >= 6);
    const std::string bytes = slurp(original);
    // Whole sections overwritten with 0xff: huge symbol indices and types,
    // and PLTs of `jmp *-1(%rip)`.
    for (const FileRange& r : targets) {
      CAPTURE(r.name);
      std::string copy = bytes;
      for (uint64_t i = 0; i < r.size; ++i) copy[r.offset + i] = '\xff';
      REQUIRE(base::write_file_atomic(damaged, copy));
      check_sane(damaged, plts);
    }
    // Random bytes in random places of those sections.
    std::mt19937 rng(20240611);
    for (int round = 0; round < 300; ++round) {
      CAPTURE(round);
      std::string copy = bytes;
      for (int n = 0; n < 8; ++n) {
        const FileRange& r = targets[rng() % targets.size()];
        if (r.size == 0) continue;
        copy[r.offset + rng() % r.size] = static_cast<char>(rng());
      }
      REQUIRE(base::write_file_atomic(damaged, copy));
      check_sane(damaged, plts);
    }
  }

  TEST_CASE("hostile .gnu_debugdata: garbage, not ELF, xz bomb") {
    runner::testing::TempDir dir;
    std::string plain = dir.file("plain");
    compile_c(plt_source(), plain, "-O1 -s");
    auto baseline = read_symbols(plain, kNoDebugRoots);
    REQUIRE(baseline);
    struct Case {
      const char* name;
      std::string section;  // shell command writing the section's bytes
      const char* error;
    };
    // A 300 MiB run of zeros packs into ~45 KiB: past the 256 MiB cap.
    static_assert(kMaxMiniDebugInfoSize == 256u << 20);
    const Case cases[] = {
        {"garbage", "head -c 4096 /dev/urandom", "not xz"},
        {"xz of text", "echo 'hello, not an ELF' | xz -T1", "not an ELF"},
        {"xz of a truncated ELF",
         "head -c 100 " + shell_quote(plain) + " | xz -T1", "truncated"},
        {"xz bomb", "head -c 300M /dev/zero | xz -T1 -0",
         "larger than 256 MiB"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      std::string data = dir.file("data"), with = dir.file("with");
      run(c.section + " > " + shell_quote(data));
      run("objcopy --add-section .gnu_debugdata=" + shell_quote(data) + " " +
          shell_quote(plain) + " " + shell_quote(with));
      auto image = ElfImage::open(with);
      REQUIRE(image);
      auto mini = image->mini_debuginfo();
      REQUIRE_FALSE(mini);
      CHECK(mini.error().message().find(".gnu_debugdata") != std::string::npos);
      CHECK(mini.error().message().find(c.error) != std::string::npos);
      // The file's own symbols are still read, unchanged.
      auto symbols = read_symbols(with, kNoDebugRoots);
      REQUIRE(symbols);
      CHECK(symbols->size() == baseline->size());
    }
  }
}

}  // namespace
}  // namespace runner::symbols
