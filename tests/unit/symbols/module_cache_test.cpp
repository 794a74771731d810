// The finalize cache (symbols/module_cache.hpp) through build_artifacts on
// real files: a second run copies what the first one parsed, byte for byte;
// a changed file, a corrupt entry, a planted symlink or someone else's file
// is never trusted; concurrent fills both succeed; eviction keeps the cap.
#include "symbols/module_cache.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "symbols/symbols.hpp"
#include "test_util.hpp"
#include "tests/support/libc.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::symbols {
namespace {

namespace fs = std::filesystem;
using runner::testing::TempDir;
using testing::prog_cpp;
using testing::prog_inline;
using testing::prog_nopie;
using testing::prog_pie;

// The executable mappings of `path` loaded at 0x7f0000000000 by pid 1.
std::vector<ModuleMapping> mappings_for(const std::string& path) {
  return testing::mappings_for(path, 1, 0x7f0000000000);
}

std::vector<ModuleMapping> mappings_for(const std::vector<std::string>& paths) {
  std::vector<ModuleMapping> out;
  for (const std::string& path : paths) {
    std::vector<ModuleMapping> more = mappings_for(path);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

ArtifactOptions options(const std::string& out_dir,
                        const std::string& cache_dir = "",
                        uint64_t max_bytes = kDefaultCacheMaxBytes) {
  ArtifactOptions o;
  o.out_dir = out_dir;
  o.cache_dir = cache_dir;
  o.cache_max_bytes = max_bytes;
  return o;
}

ArtifactSet build(const std::vector<ModuleMapping>& mappings,
                  const ArtifactOptions& o) {
  base::Result<ArtifactSet> set = build_artifacts(mappings, o);
  REQUIRE(set);
  return std::move(set).value();
}

std::string slurp(const std::string& path) {
  auto content = base::read_file(path);
  REQUIRE_MESSAGE(content, path);
  return *content;
}

// The cache's entries, by name.
std::vector<std::string> entries(const std::string& cache_dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(cache_dir)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(".entry")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t entries_size(const std::string& cache_dir) {
  uint64_t total = 0;
  for (const std::string& name : entries(cache_dir))
    total += fs::file_size(cache_dir + "/" + name);
  return total;
}

void check_same_debug_info(const ModuleDebugInfo& a, const ModuleDebugInfo& b) {
  CHECK(a.object_path == b.object_path);
  CHECK(a.addr_min == b.addr_min);
  CHECK(a.addr_max == b.addr_max);
  REQUIRE(a.entries.size() == b.entries.size());
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const DebugInfoEntry &x = a.entries[i], &y = b.entries[i];
    CHECK(x.addr == y.addr);
    CHECK(x.size == y.size);
    CHECK(x.name == y.name);
    CHECK(x.file == y.file);
    CHECK(x.line == y.line);
  }
}

// Two builds of the same mappings gave the same artifacts and results.
void check_same(const ArtifactSet& a, const std::string& a_dir,
                const ArtifactSet& b, const std::string& b_dir) {
  REQUIRE(a.modules.size() == b.modules.size());
  for (size_t i = 0; i < a.modules.size(); ++i) {
    const ModuleInfo &x = a.modules[i], &y = b.modules[i];
    INFO(x.path);
    CHECK(x.key == y.key);
    CHECK(x.build_id == y.build_id);
    CHECK(x.has_symbols == y.has_symbols);
    CHECK(x.has_unwind == y.has_unwind);
    CHECK(x.has_debug_info == y.has_debug_info);
    CHECK(x.symbol_count == y.symbol_count);
    CHECK(x.symbols_min == y.symbols_min);
    CHECK(x.symbols_max_end == y.symbols_max_end);
    for (const char* suffix : {".symbols.map", ".unwind_data"}) {
      if (fs::exists(a_dir + "/" + x.key + suffix) ||
          fs::exists(b_dir + "/" + y.key + suffix))
        CHECK(slurp(a_dir + "/" + x.key + suffix) ==
              slurp(b_dir + "/" + y.key + suffix));
    }
  }
  REQUIRE(a.debug_info.size() == b.debug_info.size());
  for (const auto& [key, info] : a.debug_info) {
    REQUIRE(b.debug_info.count(key) == 1);
    check_same_debug_info(info, b.debug_info.at(key));
  }
  CHECK(a.errors == b.errors);
  CHECK(a.error_examples == b.error_examples);
  REQUIRE(a.by_pid.size() == b.by_pid.size());
  for (const auto& [pid, list] : a.by_pid) {
    REQUIRE(b.by_pid.at(pid).size() == list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      CHECK(list[i].load_bias == b.by_pid.at(pid)[i].load_bias);
      CHECK(list[i].base_avma == b.by_pid.at(pid)[i].base_avma);
    }
  }
}

std::vector<std::string> test_files() {
  std::vector<std::string> files = {prog_pie(), prog_cpp()};
  std::string libc = runner::testing::loaded_libc_path();
  if (!libc.empty()) files.push_back(libc);
  return files;
}

ino_t inode(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

size_t replace_all(std::string& text, std::string_view from,
                   std::string_view to) {
  size_t count = 0;
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++count;
  }
  return count;
}

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

TEST_CASE("cache: a second run hits and gives the uncached run's bytes") {
  TempDir dir;
  const std::string cache = dir.file("cache/finalize");
  const auto mappings = mappings_for(test_files());
  ArtifactSet plain = build(mappings, options(dir.file("plain")));
  CHECK(plain.cache_hits == 0);
  CHECK_FALSE(fs::exists(cache));

  ArtifactSet first = build(mappings, options(dir.file("first"), cache));
  CHECK(first.cache_hits == 0);
  CHECK(entries(cache).size() == test_files().size());
  struct stat st;
  REQUIRE(::stat(cache.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  ArtifactSet second = build(mappings, options(dir.file("second"), cache));
  CHECK(second.cache_hits == test_files().size());
  check_same(plain, dir.file("plain"), first, dir.file("first"));
  check_same(plain, dir.file("plain"), second, dir.file("second"));
  CHECK_FALSE(second.debug_info.empty());
}

TEST_CASE("cache: debug info off is another key") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  const auto mappings = mappings_for(prog_pie());
  ArtifactOptions with = options(dir.file("a"), cache);
  build(mappings, with);
  ArtifactOptions without = options(dir.file("b"), cache);
  without.debug_info = false;
  ArtifactSet b = build(mappings, without);
  CHECK(b.cache_hits == 0);
  CHECK(b.debug_info.empty());
  CHECK(build(mappings, without).cache_hits == 1);
  CHECK(entries(cache).size() == 2);
}

TEST_CASE("cache: a file without a build-id is not cached") {
  TempDir dir;
  const std::string copy = dir.file("prog");
  testing::run("objcopy --remove-section .note.gnu.build-id " +
               testing::shell_quote(prog_pie()) + " " +
               testing::shell_quote(copy));
  const auto mappings = mappings_for(copy);
  ArtifactSet a = build(mappings, options(dir.file("a"), dir.file("cache")));
  REQUIRE(a.modules.size() == 1);
  CHECK(a.modules[0].build_id.empty());
  CHECK(a.modules[0].has_symbols);
  CHECK(entries(dir.file("cache")).empty());
  CHECK(build(mappings, options(dir.file("b"), dir.file("cache"))).cache_hits ==
        0);
}

TEST_CASE("cache: a changed file misses") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  const std::string copy = dir.file("prog");
  fs::copy_file(prog_pie(), copy);
  CHECK(build(mappings_for(copy), options(dir.file("a"), cache)).cache_hits ==
        0);
  CHECK(build(mappings_for(copy), options(dir.file("b"), cache)).cache_hits ==
        1);
  SUBCASE("touched") {
    fs::last_write_time(copy,
                        fs::last_write_time(copy) + std::chrono::seconds(1));
  }
  SUBCASE("rewritten in place with another program") {
    fs::copy_file(prog_nopie(), copy, fs::copy_options::overwrite_existing);
  }
  SUBCASE("rewritten in place, same build-id and size, mtime set back") {
    // cp -p or rsync -t of a rebuild that keeps its build-id: only the
    // ctime tells the file changed.
    const auto mtime = fs::last_write_time(copy);
    const ino_t ino = inode(copy);
    std::string bytes = slurp(copy);
    const size_t renamed =
        replace_all(bytes, "known_function", "knowN_function");
    REQUIRE(renamed > 0);
    sleep_ms(20);  // a ctime that differs even on a coarse clock
    {
      std::ofstream out(copy, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    fs::last_write_time(copy, mtime);
    REQUIRE(inode(copy) == ino);
    REQUIRE(fs::last_write_time(copy) == mtime);
    REQUIRE(fs::file_size(copy) == bytes.size());
  }
  ArtifactSet c = build(mappings_for(copy), options(dir.file("c"), cache));
  CHECK(c.cache_hits == 0);
  ArtifactSet plain = build(mappings_for(copy), options(dir.file("plain")));
  check_same(plain, dir.file("plain"), c, dir.file("c"));
  CHECK(build(mappings_for(copy), options(dir.file("d"), cache)).cache_hits ==
        1);
}

TEST_CASE("cache: a corrupt entry is ignored and rebuilt") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  const auto mappings = mappings_for(prog_cpp());
  ArtifactSet plain = build(mappings, options(dir.file("plain")));
  build(mappings, options(dir.file("fill"), cache));
  REQUIRE(entries(cache).size() == 1);
  const std::string entry = cache + "/" + entries(cache)[0];
  const uint64_t size = fs::file_size(entry);
  SUBCASE("truncated") { fs::resize_file(entry, size / 2); }
  SUBCASE("empty") { fs::resize_file(entry, 0); }
  SUBCASE("one byte flipped in the payload") {
    std::string bytes = slurp(entry);
    bytes[bytes.size() / 2] ^= 0x20;
    REQUIRE(base::write_file_atomic(entry, bytes));
  }
  SUBCASE("bad magic") {
    std::string bytes = slurp(entry);
    bytes[0] = 'X';
    REQUIRE(base::write_file_atomic(entry, bytes));
  }
  SUBCASE("another version") {
    std::string bytes = slurp(entry);
    bytes[8] = static_cast<char>(kModuleCacheVersion + 1);
    REQUIRE(base::write_file_atomic(entry, bytes));
  }
  ::chmod(entry.c_str(), 0600);
  ArtifactSet again = build(mappings, options(dir.file("again"), cache));
  CHECK(again.cache_hits == 0);
  check_same(plain, dir.file("plain"), again, dir.file("again"));
  CHECK(fs::file_size(entry) == size);  // rebuilt
  ArtifactSet hit = build(mappings, options(dir.file("hit"), cache));
  CHECK(hit.cache_hits == 1);
  check_same(plain, dir.file("plain"), hit, dir.file("hit"));
}

TEST_CASE("cache: decode_cache_entry refuses what it did not write") {
  ModuleOutputs out;
  out.symbols_map = "1000 10 main\n";
  out.symbol_count = 1;
  out.unwind_data = std::vector<uint8_t>{1, 2, 3};
  out.debug_info = ModuleDebugInfo{"/bin/x", 0x1000, 0x1010, {}};
  out.debug_info->entries.push_back({0x1000, 0x10, "main", "/src/x.c", 7});
  out.errors.push_back({"no_eh_frame", "/bin/x: none"});
  const std::vector<uint8_t> bytes = encode_cache_entry("key", out);
  auto back = decode_cache_entry(bytes, "key");
  REQUIRE(back);
  CHECK(back->symbols_map == out.symbols_map);
  CHECK(back->unwind_data == out.unwind_data);
  REQUIRE(back->debug_info);
  CHECK(back->debug_info->entries.at(0).line == 7u);
  CHECK(back->errors == out.errors);
  CHECK_FALSE(decode_cache_entry(bytes, "other key"));
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    CHECK_FALSE(decode_cache_entry(std::span(bytes).first(cut), "key"));
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  CHECK_FALSE(decode_cache_entry(longer, "key"));
}

TEST_CASE("cache: a planted symlink or someone else's entry is not trusted") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  const auto mappings = mappings_for(prog_pie());
  build(mappings, options(dir.file("fill"), cache));
  REQUIRE(entries(cache).size() == 1);
  const std::string entry = cache + "/" + entries(cache)[0];
  const std::string outside = dir.file("outside.entry");
  fs::copy_file(entry, outside);
  const std::string outside_bytes = slurp(outside);
  SUBCASE("symlink to a valid entry") {
    fs::remove(entry);
    fs::create_symlink(outside, entry);
  }
  SUBCASE("a valid entry owned by nobody") {
    if (::geteuid() != 0) RUNNER_SKIP_CASE("chown needs root");
    REQUIRE(::chown(entry.c_str(), 65534, 65534) == 0);
  }
  SUBCASE("a hard link to a valid entry") {
    fs::remove(entry);
    fs::create_hard_link(outside, entry);
  }
  ArtifactSet again = build(mappings, options(dir.file("again"), cache));
  CHECK(again.cache_hits == 0);
  CHECK(again.modules.at(0).has_symbols);
  struct stat st;
  REQUIRE(::lstat(entry.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK(st.st_uid == ::geteuid());
  CHECK(st.st_nlink == 1);
  CHECK(slurp(outside) == outside_bytes);
  CHECK(build(mappings, options(dir.file("hit"), cache)).cache_hits == 1);
}

TEST_CASE("cache: an untrusted cache folder is not used") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  const auto mappings = mappings_for(prog_pie());
  SUBCASE("a symlink to a folder") {
    fs::create_directory(dir.file("elsewhere"));
    fs::create_directory_symlink(dir.file("elsewhere"), cache);
  }
  SUBCASE("a regular file") { REQUIRE(base::write_file_atomic(cache, "x")); }
  SUBCASE("a folder owned by nobody") {
    if (::geteuid() != 0) RUNNER_SKIP_CASE("chown needs root");
    fs::create_directory(cache);
    REQUIRE(::chown(cache.c_str(), 65534, 65534) == 0);
  }
  ArtifactSet a = build(mappings, options(dir.file("a"), cache));
  CHECK(a.modules.at(0).has_symbols);
  ArtifactSet b = build(mappings, options(dir.file("b"), cache));
  CHECK(b.cache_hits == 0);
  if (fs::exists(dir.file("elsewhere")))
    CHECK(fs::is_empty(dir.file("elsewhere")));
}

TEST_CASE("cache: a group/world-open folder of ours is tightened to 0700") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  fs::create_directory(cache);
  REQUIRE(::chmod(cache.c_str(), 0777) == 0);
  const auto mappings = mappings_for(prog_pie());
  build(mappings, options(dir.file("a"), cache));
  struct stat st;
  REQUIRE(::stat(cache.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(build(mappings, options(dir.file("b"), cache)).cache_hits == 1);
}

TEST_CASE("cache: a cap of 0 turns it off") {
  TempDir dir;
  const auto mappings = mappings_for(prog_pie());
  build(mappings, options(dir.file("a"), dir.file("cache"), 0));
  CHECK_FALSE(fs::exists(dir.file("cache")));
}

TEST_CASE("cache: concurrent fills of the same files both succeed") {
  TempDir dir;
  const auto mappings = mappings_for(test_files());
  ArtifactSet plain = build(mappings, options(dir.file("plain")));
  for (int round = 0; round < 3; ++round) {
    const std::string cache = dir.file("cache" + std::to_string(round));
    const std::string a_dir = dir.file("a" + std::to_string(round));
    const std::string b_dir = dir.file("b" + std::to_string(round));
    base::Result<ArtifactSet> a = base::Error("not run"),
                              b = base::Error("not run");
    std::thread ta(
        [&] { a = build_artifacts(mappings, options(a_dir, cache)); });
    std::thread tb(
        [&] { b = build_artifacts(mappings, options(b_dir, cache)); });
    ta.join();
    tb.join();
    REQUIRE(a);
    REQUIRE(b);
    check_same(plain, dir.file("plain"), *a, a_dir);
    check_same(plain, dir.file("plain"), *b, b_dir);
    CHECK(entries(cache).size() == test_files().size());
    for (const auto& e : fs::directory_iterator(cache))
      CHECK_FALSE(e.path().filename().string().starts_with(".tmp-"));
    ArtifactSet hit = build(mappings, options(dir.file("hit"), cache));
    CHECK(hit.cache_hits == test_files().size());
  }
}

TEST_CASE("cache: eviction drops the least recently used entries") {
  TempDir dir;
  const std::string cache = dir.file("cache");
  auto size_of = [&](const std::string& program) {
    TempDir probe;
    build(mappings_for(program), options(probe.file("o"), probe.file("c")));
    return entries_size(probe.file("c"));
  };
  const uint64_t pie = size_of(prog_pie()),
                 inline_size = size_of(prog_inline());
  // Fill with three entries, then use the first one again.
  for (const std::string& p : {prog_pie(), prog_nopie(), prog_cpp()}) {
    build(mappings_for(p), options(dir.file("fill"), cache));
    sleep_ms(20);
  }
  REQUIRE(entries(cache).size() == 3);
  CHECK(build(mappings_for(prog_pie()), options(dir.file("use"), cache))
            .cache_hits == 1);
  sleep_ms(20);
  // Room for the recently used entry and the new one only.
  const uint64_t cap = pie + inline_size;
  build(mappings_for(prog_inline()), options(dir.file("new"), cache, cap));
  CHECK(entries_size(cache) <= cap);
  CHECK(entries(cache).size() == 2);
  CHECK(build(mappings_for(prog_pie()), options(dir.file("x"), cache, cap))
            .cache_hits == 1);
  CHECK(build(mappings_for(prog_inline()), options(dir.file("y"), cache, cap))
            .cache_hits == 1);
  CHECK(build(mappings_for(prog_cpp()), options(dir.file("z"), cache, cap))
            .cache_hits == 0);
  CHECK(entries_size(cache) <= cap);
}

}  // namespace
}  // namespace runner::symbols
