// /proc/<pid>/maps parsing and live snapshots, incl. pinning of mapped
// files that are deleted or replaced while mapped.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "perfdata/perfdata.hpp"
#include "tests/support/libc.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner::perfdata;
using runner::base::ChildProcess;
using runner::base::UniqueFd;

namespace {

const ProcMapping* find_path(const std::vector<ProcMapping>& maps,
                             const std::string& path) {
  for (const ProcMapping& m : maps)
    if (m.path == path) return &m;
  return nullptr;
}

bool has_libc(const std::vector<ProcMapping>& maps) {
  const std::string libc = runner::testing::loaded_libc_path();
  REQUIRE_FALSE(libc.empty());
  for (const ProcMapping& m : maps)
    if (m.path == libc) return true;
  return false;
}

}  // namespace

using runner::perfdata::testing::helper;
using runner::perfdata::testing::MappedFileProcess;
using runner::perfdata::testing::real_path;

TEST_SUITE("profiler") {
  TEST_CASE("parse_proc_maps keeps executable file mappings") {
    const char* text =
        "55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 247134      "
        "/usr/bin/cat\n"
        "55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:00 247134      "
        "/usr/bin/cat\n"
        "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0           [heap]\n"
        "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
        "7f0000100000-7f0000200000 r-xp 00001000 08:12 99          "
        "/opt/my app/lib with spaces.so\n"
        "7f0000200000-7f0000300000 r-xp 00000000 08:12 100         "
        "/tmp/gone.so (deleted)\n"
        "7f0000300000-7f0000301000 r-xp 00000000 00:00 0           "
        "anon_inode:[bpf]\n"
        "7f0000400000-7f0000401000 r-xp 00000000 00:01 7           "
        "/memfd:jit (deleted)\n"
        "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0           [vdso]\n"
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   "
        "[vsyscall]\n"
        "7f0000500000-7f0000600000 r-xp 00000000 08:12 101 /no/padding\n"
        "this is not a maps line\n"
        "7f0000600000 r-xp 00000000 08:12 101 /no/dash\n"
        "7f0000700000-7f0000800000 r-xp zz 08:12 101 /bad/offset\n"
        "7f0000800000-7f0000900000 r-xp 00000000 0812 101 /bad/dev\n"
        "7f0000900000-7f0000a00000 r-xp 00000000 08:12 x1 /bad/inode\n"
        "\n";
    ProcMapsStats stats;
    std::vector<ProcMapping> maps = parse_proc_maps(text, &stats);
    REQUIRE(maps.size() == 5);
    CHECK(maps[0].path == "/usr/bin/cat");
    CHECK(maps[0].start == 0x55d0c0a02000);
    CHECK(maps[0].end == 0x55d0c0a07000);
    CHECK(maps[0].offset == 0x2000);
    CHECK(maps[0].dev_major == 0xfe);
    CHECK(maps[0].dev_minor == 0);
    CHECK(maps[0].inode == 247134);
    CHECK(maps[0].perms == "r-xp");
    CHECK_FALSE(maps[0].deleted);
    CHECK(maps[1].path == "/opt/my app/lib with spaces.so");
    CHECK(maps[1].dev_minor == 0x12);
    CHECK(maps[2].path == "/tmp/gone.so");
    CHECK(maps[2].deleted);
    CHECK(maps[3].path == "/memfd:jit");  // the tracker skips it by name
    CHECK(maps[3].deleted);
    CHECK(maps[4].path == "/no/padding");
    CHECK(stats.lines == 16);
    CHECK(stats.not_executable == 3);
    CHECK(stats.anonymous == 0);
    CHECK(stats.pseudo == 3);
    CHECK(stats.malformed == 5);
  }

  TEST_CASE("parse_proc_maps counts anonymous executable mappings") {
    ProcMapsStats stats;
    auto maps = parse_proc_maps(
        "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
        "7f0000001000-7f0000002000 rwxp 00000000 00:00 0\n"
        "7f0000002000-7f0000003000 r-xp 00000000 08:01 5 /x (deleted)",
        &stats);
    REQUIRE(maps.size() == 1);
    CHECK(maps[0].path == "/x");
    CHECK(stats.anonymous == 2);
    CHECK(stats.lines == 3);
    CHECK(parse_proc_maps("").empty());
  }

  TEST_CASE("snapshot of a live process has its exe and libc") {
    runner::testing::TempDir dir;
    std::string file = dir.file("data.bin");
    REQUIRE(runner::base::write_file_atomic(file, std::string(8192, 'd')));
    MappedFileProcess proc(file);
    auto snap = snapshot_proc_maps(proc.pid());
    REQUIRE(snap);
    CHECK(snap->pid == proc.pid());
    CHECK(snap->timestamp > 0);
    CHECK(find_path(snap->mappings, real_path(helper("map_file"))) != nullptr);
    CHECK(has_libc(snap->mappings));
    // The r-x mapping of the data file made by the helper.
    const ProcMapping* data = find_path(snap->mappings, real_path(file));
    REQUIRE(data != nullptr);
    CHECK(data->perms.find('x') != std::string::npos);
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK(data->inode == st.st_ino);
    CHECK(snap->pinned.empty());
    CHECK(snap->stats.not_executable > 0);
    CHECK(snap->stats.malformed == 0);
  }

  TEST_CASE("snapshot of a dead or zombie pid is an Error") {
    runner::base::SpawnOptions opts;
    opts.argv = {"/bin/true"};
    auto child = ChildProcess::spawn(opts);
    REQUIRE(child);
    int32_t pid = child->pid();
    // Not reaped yet: a zombie, whose maps are empty. Waits for that state
    // (60 s: a guard against a hang, not a timing assumption).
    bool is_zombie = false;
    for (int i = 0; i < 6000 && !is_zombie; ++i) {
      std::string stat_text =
          runner::base::read_file("/proc/" + std::to_string(pid) + "/stat")
              .value_or("");
      is_zombie = stat_text.find(") Z ") != std::string::npos;
      if (!is_zombie) ::usleep(10000);
    }
    REQUIRE(is_zombie);
    auto zombie = snapshot_proc_maps(pid);
    REQUIRE_FALSE(zombie);
    CHECK(zombie.error().code() == ESRCH);
    REQUIRE(child->wait());
    auto dead = snapshot_proc_maps(pid);
    REQUIRE_FALSE(dead);
    CHECK((dead.error().code() == ENOENT || dead.error().code() == ESRCH));
    auto bogus = snapshot_proc_maps(-5);
    CHECK_FALSE(bogus);
  }

  TEST_CASE("snapshot pins a mapped file that was deleted and recreated") {
    runner::testing::TempDir dir;
    std::string file = dir.file("libgone.so");
    auto original = runner::base::read_file("/bin/true");
    REQUIRE(original);
    REQUIRE(runner::base::write_file_atomic(file, *original));
    MappedFileProcess proc(file);
    REQUIRE(::unlink(file.c_str()) == 0);
    REQUIRE(runner::base::write_file_atomic(file, "not the ELF any more"));

    auto snap = snapshot_proc_maps(proc.pid());
    REQUIRE(snap);
    const ProcMapping* gone =
        find_path(snap->mappings, real_path(dir.path()) + "/libgone.so");
    if (const std::string why = runner::perfdata::testing::map_files_refused();
        !why.empty()) {
      // Without the capability the mapping is counted, not listed.
      CHECK(gone == nullptr);
      CHECK(snap->deleted_unreadable == 1);
      CHECK(snap->pinned.empty());
      RUNNER_SKIP_CASE("pinning: " + why);
    }
    REQUIRE(gone != nullptr);
    CHECK(gone->deleted);
    CHECK(snap->deleted_unreadable == 0);
    REQUIRE(snap->pinned.size() == 1);
    CHECK(snap->pinned[0].start == gone->start);
    CHECK(snap->pinned[0].end == gone->end);
    std::string through =
        "/proc/self/fd/" + std::to_string(snap->pinned[0].fd.get());
    auto bytes =
        runner::base::read_file(through, runner::base::following_symlinks());
    REQUIRE(bytes);
    CHECK(*bytes == *original);

    // Still readable once the process is gone.
    proc.finish();
    auto after =
        runner::base::read_file(through, runner::base::following_symlinks());
    REQUIRE(after);
    CHECK(after->substr(0, 4) ==
          "\x7f"
          "ELF");
    CHECK(*after == *original);
  }
}
