// MappingTracker::set_unsampled_exited_limit: beyond the limit, a process
// that exited without a sample (and was not announced) is forgotten, the
// oldest first, so the tracker's memory follows the live processes rather
// than every fork of a run; a process with a sample, an announced one and
// one whose leader exits before its threads keep their mappings.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "perfdata/perfdata.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner::perfdata;
using namespace runner::perfdata::testing;

namespace {

struct Fixture {
  runner::testing::TempDir dir;
  std::string path;
  uint64_t ino = 0;
  Fixture() {
    path = real_path(dir.path()) + "/lib.so";
    REQUIRE(runner::base::write_file_atomic(path, "ELF-ish"));
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    ino = st.st_ino;
  }
  Record mmap2(int32_t pid, uint64_t time) const {
    Record r;
    r.kind = RecordKind::kMmap2;
    r.mmap.pid = r.mmap.tid = static_cast<uint32_t>(pid);
    r.mmap.addr = 0x10000;
    r.mmap.len = 0x1000;
    r.mmap.ino = ino;
    r.mmap.prot = PROT_READ | PROT_EXEC;
    r.mmap.filename = path;
    r.mmap.sample_id.time = time;
    return r;
  }
};

Record sample(int32_t pid, int32_t tid, uint64_t time) {
  Record r;
  r.kind = RecordKind::kSample;
  r.sample.pid = static_cast<uint32_t>(pid);
  r.sample.tid = static_cast<uint32_t>(tid);
  r.sample.time = time;
  return r;
}

bool has_pid(const MappingTracker& t, int32_t pid) {
  for (const TrackedMapping& m : t.mappings())
    if (m.pid == pid) return true;
  return false;
}

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE("tracker: 1000 unsampled forks that exit leave nothing behind") {
    Fixture f;
    MappingTracker t(PidFilterMode::kAll, {1});
    t.set_unsampled_exited_limit(0);
    t.apply(f.mmap2(1, 1));
    uint64_t time = 10;
    for (int32_t pid = 100; pid < 1100; ++pid) {
      t.apply(task(false, pid, 1, pid, ++time));  // inherits lib.so
      t.apply(f.mmap2(pid, ++time));
      t.apply(task(true, pid, 1, pid, ++time));
    }
    CHECK(t.stats().unsampled_forgotten == 1000);
    CHECK(t.tracked_pids() == std::set<int32_t>{1});
    CHECK(t.mappings().size() == 1);  // the announced root's
  }

  TEST_CASE("tracker: a sampled or announced process keeps its mappings") {
    Fixture f;
    MappingTracker t(PidFilterMode::kTracked, {1, 7});
    t.set_unsampled_exited_limit(0);
    t.apply(f.mmap2(1, 1));
    t.apply(task(false, 5, 1, 5, 2));
    t.apply(sample(5, 5, 3));
    t.apply(task(true, 5, 1, 5, 4));
    t.apply(task(false, 7, 1, 7, 5));  // announced, never sampled
    t.apply(task(true, 7, 1, 7, 6));
    t.apply(task(false, 9, 1, 9, 7));  // neither: forgotten
    t.apply(task(true, 9, 1, 9, 8));
    CHECK(has_pid(t, 5));
    CHECK(has_pid(t, 7));
    CHECK_FALSE(has_pid(t, 9));
    CHECK(t.tracked_pids() == std::set<int32_t>{1, 5, 7});
    CHECK(t.stats().unsampled_forgotten == 1);
  }

  TEST_CASE("tracker: a process whose leader exits first lives on in threads") {
    Fixture f;
    MappingTracker t(PidFilterMode::kTracked, {1});
    t.set_unsampled_exited_limit(0);
    t.apply(f.mmap2(1, 1));
    t.apply(task(false, 5, 1, 5, 2));
    t.apply(task(false, 5, 5, 6, 3));  // thread 6 of process 5
    t.apply(task(true, 5, 5, 5, 4));   // the leader exits first
    CHECK(has_pid(t, 5));
    t.apply(sample(5, 6, 5));  // the thread still runs
    t.apply(task(true, 5, 5, 6, 6));
    CHECK(has_pid(t, 5));
    CHECK(t.stats().unsampled_forgotten == 0);
    // Without a sample, the last thread's exit forgets it.
    t.apply(task(false, 8, 1, 8, 7));
    t.apply(task(false, 8, 8, 9, 8));
    t.apply(task(true, 8, 8, 8, 9));
    CHECK(has_pid(t, 8));
    t.apply(task(true, 8, 8, 9, 10));
    CHECK_FALSE(has_pid(t, 8));
  }

  TEST_CASE("tracker: the most recent unsampled exits are kept") {
    Fixture f;
    MappingTracker t(PidFilterMode::kAll, {1});
    t.set_unsampled_exited_limit(2);
    t.apply(f.mmap2(1, 1));
    uint64_t time = 10;
    for (int32_t pid = 100; pid < 105; ++pid) {
      t.apply(task(false, pid, 1, pid, ++time));
      t.apply(task(true, pid, 1, pid, ++time));
    }
    CHECK(t.stats().unsampled_forgotten == 3);
    CHECK(t.tracked_pids() == std::set<int32_t>{1, 103, 104});
    // A pid reused by a new process is not forgotten for the old one.
    t.apply(task(false, 103, 1, 103, ++time));
    t.apply(sample(103, 103, ++time));
    for (int32_t pid = 200; pid < 203; ++pid) {
      t.apply(task(false, pid, 1, pid, ++time));
      t.apply(task(true, pid, 1, pid, ++time));
    }
    CHECK(has_pid(t, 103));
    CHECK(t.tracked_pids() == std::set<int32_t>{1, 103, 201, 202});
  }

  TEST_CASE("tracker: without a limit an exit keeps mappings") {
    Fixture f;
    MappingTracker t(PidFilterMode::kAll, {1});
    t.apply(f.mmap2(1, 1));
    t.apply(task(false, 5, 1, 5, 2));
    t.apply(task(true, 5, 1, 5, 3));
    CHECK(has_pid(t, 5));
    CHECK(t.stats().unsampled_forgotten == 0);
  }
}
