// upload/archive: folders packed as tar (plain and zstd) and unpacked,
// checked with the real tar as the oracle; hostile archives made by tar
// itself are refused without writing outside the destination.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

using namespace runner::upload;
using runner::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// The output of a shell command (it must succeed).
std::string sh(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), p)) > 0)
    out.append(buffer, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  REQUIRE(runner::base::write_file_atomic(path, text));
}

// A folder: nested files, an empty folder, a symlink and a FIFO (skipped).
std::string sample_folder(const TempDir& dir) {
  const std::string f = dir.file("folder");
  write(f + "/perf.metadata", std::string(100000, 'm'));
  write(f + "/results/1.json", "{}");
  fs::create_directories(f + "/empty");
  fs::create_symlink("/etc/passwd", f + "/link");
  REQUIRE(::mkfifo((f + "/fifo").c_str(), 0600) == 0);
  return f;
}

// The archive as a file, for tar.
std::string save(const PackedArchive& archive, const std::string& path) {
  auto out = runner::base::create_file(path);
  REQUIRE(out);
  std::string data(archive.size, '\0');
  REQUIRE(::pread(archive.fd.get(), data.data(), data.size(), 0) ==
          static_cast<ssize_t>(data.size()));
  REQUIRE(runner::base::write_all(out->get(), data));
  return path;
}

// Unpacks the archive file at `path` into a new folder dir/<name>.
runner::base::Result<UnpackStats> unpack(const TempDir& dir,
                                         const std::string& path,
                                         const std::string& name,
                                         const UnpackLimits& limits = {}) {
  fs::create_directories(dir.file(name));
  auto fd = runner::base::open_regular_file(path);
  REQUIRE(fd);
  return unpack_archive(fd->get(), dir.file(name), limits);
}

}  // namespace

TEST_CASE("a folder packs as tar: tar lists it, unpacking gives it back") {
  TempDir dir;
  const std::string folder = sample_folder(dir);
  for (const auto compression :
       {ArchiveCompression::kNone, ArchiveCompression::kZstd}) {
    auto archive = pack_folder(folder, compression);
    REQUIRE_MESSAGE(archive, archive.error().what());
    CHECK(archive->folder_bytes == 100002);
    CHECK(archive->entries ==
          4);  // empty/, perf.metadata, results/, results/1.json
    const std::string path = save(*archive, dir.file("a.tar"));
    const std::string flag =
        compression == ArchiveCompression::kZstd ? "--zstd " : "";
    CHECK(sh("tar " + flag + "-tf " + quoted(path) + " | sort") ==
          "./empty/\n./perf.metadata\n./results/\n./results/1.json\n");
    if (compression == ArchiveCompression::kZstd) CHECK(archive->size < 5000);
    const std::string name =
        compression == ArchiveCompression::kZstd ? "z" : "t";
    auto stats = unpack(dir, path, name);
    REQUIRE_MESSAGE(stats, stats.error().what());
    CHECK(stats->files == 2);
    CHECK(*runner::base::read_file(dir.file(name + "/perf.metadata")) ==
          std::string(100000, 'm'));
    CHECK(fs::is_directory(dir.file(name + "/empty")));
    CHECK_FALSE(fs::exists(dir.file(name + "/link")));
    CHECK_FALSE(fs::exists(dir.file(name + "/fifo")));
  }
}

TEST_CASE("hostile archives are refused, nothing lands outside") {
  TempDir dir;
  write(dir.file("src/x"), "payload");
  fs::create_symlink("/etc", dir.file("src/sym"));
  const std::string src = quoted(dir.file("src"));
  struct Case {
    const char* name;
    std::string make;  // a tar command writing ARCHIVE
    const char* error;
  };
  const Case cases[] = {
      {"dotdot",
       "tar -C " + src + " -cf ARCHIVE --transform='s,^x,../escaped,' x",
       "'..' in it"},
      {"absolute",
       "tar -C " + src + " -cPf ARCHIVE --transform='s,^x," + dir.file("abs") +
           ",' x",
       "absolute name"},
      {"symlink", "tar -C " + src + " -cf ARCHIVE sym",
       "not a regular file or folder"},
      {"hardlink",
       "ln " + quoted(dir.file("src/x")) + " " + quoted(dir.file("src/y")) +
           " && tar -C " + src + " -cf ARCHIVE x y",
       "a hard link"},
  };
  for (const Case& c : cases) {
    const std::string case_name = c.name;
    CAPTURE(case_name);
    std::string command = c.make;
    const std::string archive = dir.file(std::string(c.name) + ".tar");
    command.replace(command.find("ARCHIVE"), 7, quoted(archive));
    sh(command);
    auto r = unpack(dir, archive, std::string("out-") + c.name);
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message().find(c.error) != std::string::npos,
                  r.error().message());
  }
  CHECK_FALSE(fs::exists(dir.file("escaped")));
  CHECK_FALSE(fs::exists(dir.file("abs")));
}

TEST_CASE("limits, truncation and garbage") {
  TempDir dir;
  write(dir.file("src/big"), std::string(1u << 20, 'b'));
  sh("tar -C " + quoted(dir.file("src")) + " -cf " +
     quoted(dir.file("big.tar")) + " big");
  UnpackLimits small;
  small.max_total_bytes = 1000;
  auto over = unpack(dir, dir.file("big.tar"), "over", small);
  REQUIRE_FALSE(over);
  CHECK(over.error().message().find("more than 1000 bytes unpacked") !=
        std::string::npos);
  CHECK(fs::file_size(dir.file("over/big")) == 0);  // nothing beyond the cap
  const std::string whole = *runner::base::read_file(dir.file("big.tar"));
  write(dir.file("cut.tar"), whole.substr(0, 700000));
  CHECK_FALSE(unpack(dir, dir.file("cut.tar"), "cut"));
  write(dir.file("junk.tar"), std::string(4096, 'j'));
  CHECK_FALSE(unpack(dir, dir.file("junk.tar"), "junk"));
  // An entry that exists already is not overwritten.
  fs::create_directories(dir.file("again"));
  write(dir.file("again/big"), "mine");
  CHECK_FALSE(unpack(dir, dir.file("big.tar"), "again"));
  CHECK(*runner::base::read_file(dir.file("again/big")) == "mine");
}

TEST_CASE("the runner's limits: size ratio and entries, nothing beyond them") {
  TempDir dir;
  // 64 MiB of zeros (a sparse file) pack to a few KiB of zstd.
  fs::create_directories(dir.file("zeros"));
  { std::ofstream(dir.file("zeros/z")); }
  fs::resize_file(dir.file("zeros/z"), uint64_t{64} << 20);
  auto packed = pack_folder(dir.file("zeros"), ArchiveCompression::kZstd);
  REQUIRE(packed);
  REQUIRE(packed->size < (64u << 10));
  const std::string bomb = save(*packed, dir.file("bomb.tar.zst"));
  UnpackLimits ratio;
  ratio.max_ratio = 100;
  ratio.ratio_floor = 1u << 20;
  auto refused = unpack(dir, bomb, "ratio", ratio);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message().find("bytes unpacking to more than 1048576 "
                                       "bytes (100 times its size)") !=
        std::string::npos);
  CHECK(fs::file_size(dir.file("ratio/z")) <= (1u << 20));
  // Without a ratio, the cap alone lets it through.
  auto unpacked = unpack(dir, bomb, "whole");
  REQUIRE_MESSAGE(unpacked, unpacked.error().what());
  CHECK(unpacked->bytes == (64u << 20));

  for (int i = 0; i < 30; ++i)
    write(dir.file("many/f" + std::to_string(i)), "x");
  sh("cd " + quoted(dir.file("many")) + " && tar -cf " +
     quoted(dir.file("many.tar")) + " f*");
  UnpackLimits few;
  few.max_entries = 10;
  auto too_many = unpack(dir, dir.file("many.tar"), "few", few);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message() ==
        "refused an archive of more than 10 files and folders");
  size_t written = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.file("few"))) {
    (void)e;
    ++written;
  }
  CHECK(written == 10);  // the eleventh was refused before it was written
}
