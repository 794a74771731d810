// MappingTracker semantics on records built by hand over real files (the
// tracker stat()s every mapped path): fork inheritance, exec purge, pid
// filters, backfill, replaced/missing files and pinned fds, replay order.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "perfdata/perfdata.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner::perfdata;
using namespace runner::perfdata::testing;
namespace pf = runner::format::perf;

namespace {

// A real file under `dir` (real path, so it matches what the kernel
// reports), with its device and inode as MMAP2 would name them.
struct File {
  std::string path;
  uint64_t ino = 0;
  uint32_t maj = 0, min = 0;
};
File make_file(const runner::testing::TempDir& dir, const std::string& name,
               const std::string& content = "ELF-ish content") {
  std::string path = real_path(dir.path()) + "/" + name;
  REQUIRE(runner::base::write_file_atomic(path, content));
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return File{path, st.st_ino, major(st.st_dev), minor(st.st_dev)};
}

Record mmap2(int32_t pid, const File& f, uint64_t start, uint64_t time,
             uint32_t prot = PROT_READ | PROT_EXEC) {
  Record r;
  r.kind = RecordKind::kMmap2;
  r.type = PERF_RECORD_MMAP2;
  Mmap2Record& m = r.mmap;
  m.pid = m.tid = static_cast<uint32_t>(pid);
  m.addr = start;
  m.len = 0x1000;
  m.pgoff = 0;
  m.ino = f.ino;
  m.maj = f.maj;
  m.min = f.min;
  m.prot = prot;
  m.filename = f.path;
  m.sample_id.time = time;
  return r;
}

Record mmap2_path(int32_t pid, const std::string& path, uint32_t prot) {
  File f{path, 0};
  return mmap2(pid, f, 0x1000, 1, prot);
}

Record comm(int32_t pid, int32_t tid, bool exec) {
  Record r;
  r.kind = RecordKind::kComm;
  r.type = PERF_RECORD_COMM;
  r.comm.pid = static_cast<uint32_t>(pid);
  r.comm.tid = static_cast<uint32_t>(tid);
  r.comm.exec = exec;
  r.comm.comm = "x";
  return r;
}

std::vector<TrackedMapping> of_pid(const MappingTracker& t, int32_t pid) {
  std::vector<TrackedMapping> out;
  for (const TrackedMapping& m : t.mappings())
    if (m.pid == pid) out.push_back(m);
  return out;
}

const TrackedMapping* find(const std::vector<TrackedMapping>& maps,
                           const std::string& path) {
  for (const TrackedMapping& m : maps)
    if (m.path == path) return &m;
  return nullptr;
}

uint64_t skipped(const MappingTracker& t, const std::string& reason) {
  auto it = t.stats().skipped.find(reason);
  return it == t.stats().skipped.end() ? 0 : it->second;
}

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE(
      "tracker: fork copies the parent's mappings, not over the "
      "child's own") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a.so"), b = make_file(dir, "b.so");
    MappingTracker t(PidFilterMode::kTracked, {100});
    t.apply(mmap2(100, a, 0x10000, 1));
    t.apply(mmap2(100, b, 0x20000, 2));
    t.apply(mmap2(101, b, 0x90000, 3));  // 101 not tracked yet: filtered
    CHECK(skipped(t, "pid_filtered") == 1);
    t.apply(task(false, 101, 100, 101, 4));
    t.apply(mmap2(101, b, 0x90000, 5));      // the child's own mapping of b
    t.apply(task(false, 101, 100, 101, 6));  // a second FORK: b stays own
    // a and b as the parent maps them, and the child's own second b.
    auto child = of_pid(t, 101);
    REQUIRE(child.size() == 3);
    REQUIRE(find(child, a.path) != nullptr);
    CHECK(find(child, a.path)->start == 0x10000);
    CHECK(find(child, a.path)->pid == 101);
    CHECK(child[1].path == b.path);
    CHECK(child[1].start == 0x20000);
    CHECK(child[2].path == b.path);
    CHECK(child[2].start == 0x90000);
    CHECK(find(of_pid(t, 100), b.path)->start == 0x20000);

    t.apply(task(false, 100, 100, 150, 7));  // a thread: nothing new
    t.apply(task(false, 102, 101, 102, 8));  // a grandchild
    CHECK(t.tracked_pids() == std::set<int32_t>{100, 101, 102});
    CHECK(of_pid(t, 102).size() == 3);
    CHECK(t.stats().forks == 4);
  }

  TEST_CASE(
      "tracker: an announced fork of an untracked parent inherits "
      "its mappings") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a");
    MappingTracker t(PidFilterMode::kTracked, {101});
    t.apply(mmap2(100, a, 0x10000, 1));  // the launcher: not tracked
    t.apply(task(false, 101, 100, 101, 2));
    t.apply(task(false, 102, 100, 102, 3));  // a sibling: not tracked
    auto maps = t.mappings();
    REQUIRE(maps.size() == 1);
    CHECK(maps[0].pid == 101);
    CHECK(maps[0].start == 0x10000);
    CHECK(t.tracked_pids() == std::set<int32_t>{101});
    CHECK(skipped(t, "pid_filtered") == 1);
  }

  TEST_CASE("tracker: exec drops only that pid's mappings") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a"), b = make_file(dir, "b");
    MappingTracker t(PidFilterMode::kTracked, {100, 101});
    t.apply(mmap2(100, a, 0x1000, 1));
    t.apply(mmap2(101, a, 0x1000, 1));
    t.apply(comm(101, 105, true));   // a thread renamed: not an exec
    t.apply(comm(101, 101, false));  // prctl(PR_SET_NAME): not an exec
    CHECK(of_pid(t, 101).size() == 1);
    t.apply(comm(101, 101, true));
    CHECK(of_pid(t, 101).empty());
    CHECK(of_pid(t, 100).size() == 1);
    t.apply(mmap2(101, b, 0x5000, 2));  // the new image
    REQUIRE(of_pid(t, 101).size() == 1);
    CHECK(of_pid(t, 101)[0].path == b.path);
    CHECK(t.stats().comm_exec == 1);
    // Exit keeps the mappings.
    t.apply(task(true, 101, 100, 101, 3));
    CHECK(of_pid(t, 101).size() == 1);
    CHECK(t.stats().exits == 1);
  }

  TEST_CASE(
      "tracker: a reused pid does not keep the dead process's "
      "mappings") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a"), b = make_file(dir, "b");
    MappingTracker t(PidFilterMode::kTracked, {50});
    t.apply(mmap2(50, a, 0x1000, 1));
    t.apply(task(false, 60, 50, 60, 2));
    t.apply(comm(60, 60, true));
    t.apply(mmap2(60, b, 0x2000, 3));
    t.apply(task(true, 60, 50, 60, 4));
    t.apply(task(false, 60, 50, 60, 5));  // the pid comes back
    auto child = of_pid(t, 60);
    REQUIRE(child.size() == 1);
    CHECK(child[0].path == a.path);
  }

  TEST_CASE("tracker: pid filter tracked vs all") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a");
    for (PidFilterMode mode : {PidFilterMode::kTracked, PidFilterMode::kAll}) {
      MappingTracker t(mode, {100});
      t.apply(mmap2(100, a, 0x1000, 1));
      t.apply(mmap2(200, a, 0x1000, 1));
      t.apply(comm(300, 300, true));
      if (mode == PidFilterMode::kTracked) {
        CHECK(t.mappings().size() == 1);
        CHECK(skipped(t, "pid_filtered") == 1);
        CHECK(t.tracked_pids() == std::set<int32_t>{100});
        CHECK(t.stats().comm_exec == 0);
      } else {
        CHECK(t.mappings().size() == 2);
        CHECK(skipped(t, "pid_filtered") == 0);
        CHECK(t.tracked_pids() == std::set<int32_t>{100, 200});
        CHECK(t.stats().comm_exec == 1);
      }
    }
  }

  TEST_CASE(
      "tracker: skips non-exec, anonymous, pseudo and memfd "
      "mappings; every mapping of a path is kept") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a");
    MappingTracker t(PidFilterMode::kAll, {});
    t.apply(mmap2(1, a, 0x1000, 1, PROT_READ));
    t.apply(mmap2_path(1, "//anon", PROT_READ | PROT_EXEC));
    t.apply(mmap2_path(1, "[vdso]", PROT_READ | PROT_EXEC));
    t.apply(mmap2_path(1, "anon_inode:[bpf]", PROT_READ | PROT_EXEC));
    t.apply(mmap2_path(1, "/memfd:jit", PROT_READ | PROT_EXEC));
    t.apply(mmap2(1, a, 0x1000, 2));
    t.apply(mmap2(1, a, 0x8000, 3));
    CHECK(skipped(t, "not_executable") == 1);
    CHECK(skipped(t, "anon") == 2);
    CHECK(skipped(t, "pseudo_path") == 1);
    CHECK(skipped(t, "memfd") == 1);
    CHECK(t.stats().mmap_records == 7);
    auto maps = t.mappings();
    REQUIRE(maps.size() == 2);
    CHECK(maps[0].start == 0x1000);
    CHECK(maps[1].start == 0x8000);
    CHECK(maps[1].end == 0x9000);
    CHECK(maps[1].open_path == a.path);
    CHECK(maps[1].source == TrackedMapping::Source::kMmap2);
  }

  TEST_CASE(
      "tracker: a file mapped twice keeps both mappings, each with its own "
      "offset (V8 remaps node's embedded builtins)") {
    runner::testing::TempDir dir;
    File node = make_file(dir, "node");
    MappingTracker t(PidFilterMode::kAll, {});
    Record text = mmap2(1, node, 0x400000, 1);
    text.mmap.len = 0x200000;
    text.mmap.pgoff = 0x1000;
    Record remap = mmap2(1, node, 0x7f0000000000, 2);
    remap.mmap.len = 0x100000;
    remap.mmap.pgoff = 0x14c4000;
    t.apply(text);
    t.apply(remap);
    auto maps = of_pid(t, 1);
    REQUIRE(maps.size() == 2);
    CHECK(maps[0].start == 0x400000);
    CHECK(maps[0].pgoff == 0x1000);
    CHECK(maps[1].start == 0x7f0000000000);
    CHECK(maps[1].pgoff == 0x14c4000);
  }

  TEST_CASE("tracker: a new mapping cuts what it overlaps, as mmap does") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a"), b = make_file(dir, "b");
    MappingTracker t(PidFilterMode::kAll, {});
    Record big = mmap2(1, a, 0x10000, 1);
    big.mmap.len = 0x4000;  // 0x10000..0x14000
    big.mmap.pgoff = 0x3000;
    t.apply(big);
    t.apply(mmap2(1, b, 0x11000, 2));  // over its second page
    auto maps = of_pid(t, 1);
    REQUIRE(maps.size() == 3);
    CHECK(maps[0].path == a.path);
    CHECK(maps[0].start == 0x10000);
    CHECK(maps[0].end == 0x11000);
    CHECK(maps[0].pgoff == 0x3000);
    CHECK(maps[1].path == b.path);
    CHECK(maps[1].start == 0x11000);
    CHECK(maps[1].end == 0x12000);
    CHECK(maps[2].path == a.path);
    CHECK(maps[2].start == 0x12000);
    CHECK(maps[2].end == 0x14000);
    CHECK(maps[2].pgoff == 0x5000);  // moved along with its start
    // Mapped again over all of them: one mapping is left.
    Record all = mmap2(1, b, 0xf000, 3);
    all.mmap.len = 0x6000;
    t.apply(all);
    maps = of_pid(t, 1);
    REQUIRE(maps.size() == 1);
    CHECK(maps[0].start == 0xf000);
    CHECK(maps[0].end == 0x15000);
  }

  TEST_CASE("tracker: replaced and missing files are not used silently") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a"), b = make_file(dir, "b");
    File gone = make_file(dir, "gone");
    MappingTracker t(PidFilterMode::kAll, {});
    Record ra = mmap2(1, a, 0x1000, 1);
    ra.mmap.ino = a.ino + 1000;  // mapped a file that is not there any more
    t.apply(ra);
    t.apply(mmap2(1, b, 0x2000, 1));
    REQUIRE(::unlink(gone.path.c_str()) == 0);
    t.apply(mmap2(1, gone, 0x3000, 1));
    Record no_ino = mmap2(1, b, 0x4000, 1);  // build-id variant: no inode
    no_ino.mmap.has_build_id = true;
    no_ino.mmap.ino = 0;
    no_ino.mmap.filename = b.path;
    t.apply(no_ino);
    CHECK(skipped(t, "replaced_on_disk") == 1);
    CHECK(skipped(t, "missing_on_disk") == 1);
    auto maps = t.mappings();
    REQUIRE(maps.size() == 2);  // b, twice: with and without an inode
    CHECK(maps[0].path == b.path);
    CHECK(maps[0].start == 0x2000);
    CHECK(maps[1].path == b.path);
    CHECK(maps[1].start == 0x4000);
  }

  TEST_CASE("tracker: a pinned snapshot fd stands in for a replaced file") {
    runner::testing::TempDir dir;
    auto elf = runner::base::read_file("/bin/true");
    REQUIRE(elf);
    File lib = make_file(dir, "libreplaced.so", *elf);
    MappedFileProcess proc(lib.path);
    // Replace the file the way installers do: new inode, renamed over it.
    File fresh = make_file(dir, "libreplaced.so.new", "new version");
    REQUIRE(::rename(fresh.path.c_str(), lib.path.c_str()) == 0);

    auto snap = snapshot_proc_maps(proc.pid());
    REQUIRE(snap);
    if (const std::string why = map_files_refused(); !why.empty()) {
      CHECK(snap->pinned.empty());
      CHECK(snap->deleted_unreadable == 1);
      RUNNER_SKIP_CASE(why);
    }
    REQUIRE(snap->pinned.size() == 1);
    const auto pid = proc.pid();

    MappingTracker t(PidFilterMode::kTracked, {pid});
    t.apply(mmap2(pid, lib, 0x7f0000000000, 1));
    CHECK(skipped(t, "replaced_on_disk") == 1);
    CHECK(t.mappings().empty());
    std::vector<ProcSnapshot> snaps;
    snaps.push_back(std::move(*snap));
    t.backfill(std::move(snaps));
    proc.finish();

    CHECK(skipped(t, "replaced_on_disk") == 0);
    // The MMAP2 mapping (at an address of the test's) and the snapshot's
    // (where the helper really maps it) are both served by the pin.
    CHECK(t.stats().pinned == 2);
    auto maps = of_pid(t, pid);
    const TrackedMapping* m = nullptr;
    for (const TrackedMapping& x : maps)
      if (x.path == lib.path && x.start == 0x7f0000000000) m = &x;
    REQUIRE(m != nullptr);
    CHECK(m->source == TrackedMapping::Source::kMmap2);
    CHECK(m->open_path.rfind("/proc/self/fd/", 0) == 0);
    auto bytes = runner::base::read_file(m->open_path,
                                         runner::base::following_symlinks());
    REQUIRE(bytes);
    CHECK(*bytes == *elf);
    // The helper's own exe and libc came from the snapshot.
    CHECK(find(maps, real_path(helper("map_file"))) != nullptr);
    CHECK(t.stats().backfilled >= 2);
  }

  TEST_CASE("tracker: backfill adds only missing (pid, path) pairs") {
    runner::testing::TempDir dir;
    File a = make_file(dir, "a"), c = make_file(dir, "c");
    File d = make_file(dir, "d");
    MappingTracker t(PidFilterMode::kTracked, {100});
    t.apply(mmap2(100, a, 0x1000, 1));
    t.apply(task(false, 101, 100, 101, 2));

    auto mapping = [](const File& f, uint64_t start) {
      ProcMapping m;
      m.start = start;
      m.end = start + 0x1000;
      m.offset = 0x2000;
      m.inode = f.ino;
      m.perms = "r-xp";
      m.path = f.path;
      return m;
    };
    std::vector<ProcSnapshot> snaps(3);
    snaps[0].pid = 100;
    snaps[0].timestamp = 77;
    snaps[0].mappings = {mapping(a, 0x5000), mapping(c, 0x6000),
                         mapping(c, 0x7000)};
    snaps[1].pid = 101;  // a tracked descendant
    snaps[1].mappings = {mapping(d, 0x8000)};
    snaps[2].pid = 300;  // not tracked
    snaps[2].mappings = {mapping(c, 0x9000)};
    snaps[2].deleted_unreadable = 2;
    ProcMapping memfd = mapping(c, 0xa000);
    memfd.path = "/memfd:x";
    snaps[0].mappings.push_back(memfd);
    ProcMapping replaced = mapping(d, 0xb000);
    replaced.path = d.path;
    replaced.inode = d.ino + 1;
    snaps[1].mappings.push_back(replaced);
    t.backfill(std::move(snaps));

    auto p100 = of_pid(t, 100);
    // a's MMAP2 mapping, a's and c's (twice) other mappings in the snapshot.
    REQUIRE(p100.size() == 4);
    CHECK(find(p100, a.path)->start == 0x1000);
    CHECK(find(p100, a.path)->source == TrackedMapping::Source::kMmap2);
    CHECK(p100[1].path == a.path);
    CHECK(p100[1].start == 0x5000);
    CHECK(p100[3].path == c.path);
    CHECK(p100[3].start == 0x7000);
    const TrackedMapping* cm = find(p100, c.path);
    REQUIRE(cm != nullptr);
    CHECK(cm->start == 0x6000);
    CHECK(cm->pgoff == 0x2000);
    CHECK(cm->timestamp == 77);
    CHECK(cm->source == TrackedMapping::Source::kProcSnapshot);
    auto p101 = of_pid(t, 101);
    CHECK(p101.size() == 2);  // inherited a + backfilled d
    CHECK(find(p101, d.path)->start == 0x8000);
    CHECK(of_pid(t, 300).empty());
    CHECK(t.stats().backfilled == 4);
    CHECK(skipped(t, "pid_filtered") == 1);
    CHECK(skipped(t, "deleted_unreadable") == 2);
    CHECK(skipped(t, "memfd") == 1);
  }

  TEST_CASE(
      "tracker: replay sorts by time and keeps what a truncated file "
      "had") {
    runner::testing::TempDir dir;
    File exe = make_file(dir, "exe");
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
                       PERF_SAMPLE_TIME | PERF_SAMPLE_IP;
    attr.sample_id_all = 1;
    auto trailer = [](uint32_t pid, uint64_t time) {
      Bytes b;
      b.u32(pid).u32(pid).u64(time).u64(1);
      return b;
    };
    Bytes f = pipe_header();
    f.append(attr_record(attr, {1}));
    // Written out of order, as two CPUs' buffers would be: the FORK (time
    // 20) comes before the parent's MMAP2 (time 10) in the file.
    Bytes fork;
    fork.u32(11).u32(10).u32(11).u32(10).u64(20).append(trailer(11, 20));
    f.append(record(PERF_RECORD_FORK, 0, fork));
    Bytes mm;
    mm.u32(10).u32(10).u64(0x400000).u64(0x1000).u64(0);
    mm.u32(0).u32(0).u64(exe.ino).u64(0).u32(PROT_READ | PROT_EXEC).u32(0);
    mm.str8(exe.path).append(trailer(10, 10));
    f.append(record(PERF_RECORD_MMAP2, 0, mm));
    Bytes sample;
    sample.u64(1).u32(10).u32(10).u64(30).u64(0x400100);
    f.append(record(PERF_RECORD_SAMPLE, 0, sample));
    write_bytes(dir.file("ok.pipedata"), f.data());

    MappingTracker t(PidFilterMode::kTracked, {10});
    REQUIRE(t.replay_file(dir.file("ok.pipedata")));
    CHECK(t.tracked_pids() == std::set<int32_t>{10, 11});
    CHECK(of_pid(t, 11).size() == 1);  // inherited: the MMAP2 came first
    CHECK(t.stats().replay_errors == 0);

    // Cut in the middle of the sample: the mappings read so far survive.
    std::vector<uint8_t> cut(f.data().begin(), f.data().end() - 5);
    write_bytes(dir.file("cut.pipedata"), cut);
    MappingTracker t2(PidFilterMode::kTracked, {10});
    auto status = t2.replay_file(dir.file("cut.pipedata"));
    REQUIRE_FALSE(status);
    CHECK(status.error().message().find("truncated") != std::string::npos);
    CHECK(t2.stats().replay_errors == 1);
    CHECK(of_pid(t2, 10).size() == 1);
    CHECK(of_pid(t2, 11).size() == 1);

    MappingTracker t3(PidFilterMode::kTracked, {10});
    CHECK_FALSE(t3.replay_file(dir.file("missing.pipedata")));
    CHECK(t3.mappings().empty());
  }
}
