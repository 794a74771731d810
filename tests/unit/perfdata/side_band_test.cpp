// The side-band records the sampler keeps while it writes perf.pipedata
// (profiler::SideBandLog) against the file itself: real sampled runs of the
// helper programs (forks, execs, file mappings), replayed both ways by
// MappingTracker, must give the same mappings, tracked pids and stats.
// Every case needs perf events ("perf: ..."), each skipped alone when they
// are refused.
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "perfdata/perfdata.hpp"
#include "profiler/profiler.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner;
using namespace runner::perfdata;
using runner::perfdata::testing::helper;
using runner::testing::TempDir;

namespace {

struct Recorded {
  std::string path;
  int32_t pid = 0;
  profiler::SamplerStats stats;
  format::perf::SideBandRecords side_band;
};

// Samples `argv` from its start to its exit (one window) into `path`.
Recorded record(const std::vector<std::string>& argv,
                const profiler::SamplerOptions& options,
                const std::string& path) {
  Recorded out;
  out.path = path;
  base::SpawnOptions spawn;
  spawn.argv = argv;
  spawn.suspended = true;
  auto child = base::ChildProcess::spawn(spawn);
  REQUIRE_MESSAGE(child, child.error().what());
  out.pid = child->pid();
  auto sampler = profiler::Sampler::create(child->pid(), options, path);
  REQUIRE_MESSAGE(sampler, sampler.error().what());
  REQUIRE((*sampler)->enable());
  REQUIRE(child->release());
  auto status = child->wait();
  REQUIRE(status);
  CHECK(status->shell_code() == 0);
  auto stats = (*sampler)->finish();
  REQUIRE_MESSAGE(stats, stats.error().what());
  out.stats = *stats;
  out.side_band = (*sampler)->take_side_band();
  return out;
}

profiler::SamplerOptions options_for(profiler::CallGraphMode mode,
                                     uint32_t frequency,
                                     uint32_t drain_threads = 1) {
  profiler::SamplerOptions options;
  options.call_graph = mode;
  options.frequency = frequency;
  options.drain_threads = drain_threads;
  return options;
}

void check_same_mappings(const std::vector<TrackedMapping>& a,
                         const std::vector<TrackedMapping>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("mapping " << i << ": " << a[i].path << " of pid " << a[i].pid);
    CHECK(a[i].pid == b[i].pid);
    CHECK(a[i].start == b[i].start);
    CHECK(a[i].end == b[i].end);
    CHECK(a[i].pgoff == b[i].pgoff);
    CHECK(a[i].path == b[i].path);
    CHECK(a[i].open_path == b[i].open_path);
    CHECK(a[i].dev_major == b[i].dev_major);
    CHECK(a[i].dev_minor == b[i].dev_minor);
    CHECK(a[i].inode == b[i].inode);
    CHECK(a[i].timestamp == b[i].timestamp);
    CHECK(a[i].source == b[i].source);
  }
}

void check_same_stats(const TrackingStats& a, const TrackingStats& b) {
  CHECK(a.skipped == b.skipped);
  CHECK(a.mmap_records == b.mmap_records);
  CHECK(a.comm_exec == b.comm_exec);
  CHECK(a.forks == b.forks);
  CHECK(a.exits == b.exits);
  CHECK(a.backfilled == b.backfilled);
  CHECK(a.pinned == b.pinned);
  CHECK(a.replay_errors == b.replay_errors);
  CHECK(a.unsampled_forgotten == b.unsampled_forgotten);
}

// Both replays, in both pid filter modes, with and without forgetting the
// processes that exited unsampled (which depends on the sampled pids).
// Returns the FORK records replayed.
uint64_t check_same_replay(const Recorded& run) {
  REQUIRE_MESSAGE(run.side_band.usable(), run.side_band.incomplete);
  uint64_t forks = 0;
  for (PidFilterMode mode : {PidFilterMode::kTracked, PidFilterMode::kAll}) {
    for (size_t limit : {SIZE_MAX, size_t{0}, size_t{1}, size_t{3}}) {
      INFO("mode " << (mode == PidFilterMode::kAll ? "all" : "tracked")
                   << ", unsampled exited kept " << limit);
      MappingTracker from_file(mode, {run.pid});
      MappingTracker from_log(mode, {run.pid});
      from_file.set_unsampled_exited_limit(limit);
      from_log.set_unsampled_exited_limit(limit);
      REQUIRE(from_file.replay_file(run.path));
      REQUIRE(from_log.replay_records(run.side_band));
      check_same_mappings(from_file.mappings(), from_log.mappings());
      CHECK(from_file.tracked_pids() == from_log.tracked_pids());
      check_same_stats(from_file.stats(), from_log.stats());
      CHECK_FALSE(from_file.mappings().empty());
      forks = from_file.stats().forks;
    }
  }
  return forks;
}

// The file's records, fed to a SideBandLog the way the drain does.
format::perf::SideBandRecords log_of_file(const std::string& path,
                                          uint64_t max_bytes) {
  auto bytes = base::read_file(path);
  REQUIRE(bytes);
  auto reader = PipedataReader::open(path);
  REQUIRE(reader);
  std::vector<format::perf::EventDesc> events;
  Record record;
  while (true) {
    auto more = reader->next_into(record, false);
    REQUIRE(more);
    if (!*more || record.kind != RecordKind::kAttr) break;
  }
  for (const EventAttr& attr : reader->attrs())
    events.push_back({attr.attr, attr.name, attr.ids});
  profiler::SideBandLog log(events, max_bytes);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes->data());
  size_t at = format::perf::kPipeHeaderSize;
  perf_event_header header;
  while (at + sizeof(header) <= bytes->size()) {
    std::memcpy(&header, data + at, sizeof(header));
    REQUIRE(header.size >= sizeof(header));
    REQUIRE(at + header.size <= bytes->size());
    if (header.type == format::perf::kFinishedRound) {
      log.end_round();
    } else if (header.type < format::perf::kHeaderAttr) {
      profiler::RingBuffer::RecordBytes record_bytes;
      record_bytes.first = {data + at, header.size};
      log.add(header, record_bytes);
    }
    at += header.size;
  }
  return log.take();
}

void check_same_records(const format::perf::SideBandRecords& a,
                        const format::perf::SideBandRecords& b) {
  CHECK(a.stream == b.stream);
  REQUIRE(a.samples.size() == b.samples.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    CHECK(a.samples[i].at == b.samples[i].at);
    CHECK(a.samples[i].pid == b.samples[i].pid);
    CHECK(a.samples[i].time == b.samples[i].time);
  }
  CHECK(a.rounds.size() == b.rounds.size());
}

}  // namespace

TEST_CASE("perf: side-band records replay like the file they were kept of") {
  RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
  TempDir dir;
  struct Case {
    const char* name;
    std::vector<std::string> argv;
    profiler::CallGraphMode mode;
    uint32_t frequency;
    uint32_t drain_threads = 1;
  };
  const std::vector<Case> cases = {
      {"hot loop, dwarf",
       {helper("hot_loop"), "150"},
       profiler::CallGraphMode::kDwarf,
       997},
      {"40 forked children, dwarf",
       {helper("fork_children"), "40", "5"},
       profiler::CallGraphMode::kDwarf,
       4000},
      {"40 forked children, dwarf, a drain thread per CPU",
       {helper("fork_children"), "40", "5"},
       profiler::CallGraphMode::kDwarf,
       4000,
       static_cast<uint32_t>(
           std::max(2u, std::thread::hardware_concurrency()))},
      {"40 forked children, frame pointers",
       {helper("fork_children"), "40", "5"},
       profiler::CallGraphMode::kFramePointer,
       10000},
      {"fork and exec of a shell loop, dwarf",
       {helper("fork_exec"), "/bin/sh", "-c",
        "for i in 1 2 3 4 5 6 7 8; do /bin/true; done"},
       profiler::CallGraphMode::kDwarf,
       997},
  };
  int index = 0;
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Recorded run =
        record(c.argv, options_for(c.mode, c.frequency, c.drain_threads),
               dir.file("perf" + std::to_string(index++) + ".pipedata"));
    REQUIRE(run.stats.samples > 0);
    const uint64_t forks = check_same_replay(run);
    // Of the samples, a mark per process (a pid's first sample after the
    // FORK that made it) is kept: the records follow the side-band records,
    // not the samples.
    CHECK(run.side_band.samples.size() <= forks + 1);
    CHECK(run.side_band.samples.size() * 10 < run.stats.samples);
    // The drain's log and one fed with the file's records agree.
    check_same_records(run.side_band, log_of_file(run.path, UINT64_MAX));
  }
}

TEST_CASE("perf: past its memory cap the log says so and keeps nothing") {
  RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
  TempDir dir;
  const Recorded run = record({helper("fork_children"), "10", "5"},
                              options_for(profiler::CallGraphMode::kDwarf, 997),
                              dir.file("p.pipedata"));
  REQUIRE(run.side_band.usable());
  const format::perf::SideBandRecords small =
      log_of_file(run.path, run.side_band.stream.size() / 2);
  CHECK_FALSE(small.usable());
  CHECK(small.incomplete.find("MiB") != std::string::npos);
  CHECK(small.stream.empty());
  CHECK(small.samples.empty());
  CHECK(log_of_file(run.path, run.side_band.stream.size() * 4).usable());
}

TEST_CASE("perf: a run of records set aside is kept like records one by one") {
  RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
  TempDir dir;
  const Recorded run = record({helper("fork_children"), "10", "5"},
                              options_for(profiler::CallGraphMode::kDwarf, 997),
                              dir.file("p.pipedata"));
  REQUIRE(run.side_band.usable());
  // The file's kernel records between round markers, each run at once.
  auto bytes = base::read_file(run.path);
  REQUIRE(bytes);
  std::vector<format::perf::EventDesc> events;
  auto reader = PipedataReader::open(run.path);
  REQUIRE(reader);
  Record record;
  while (reader->next_into(record, false).value_or(false) &&
         record.kind == RecordKind::kAttr) {
  }
  for (const EventAttr& attr : reader->attrs())
    events.push_back({attr.attr, attr.name, attr.ids});
  profiler::SideBandLog log(events);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes->data());
  std::vector<uint8_t> pending;
  size_t at = format::perf::kPipeHeaderSize;
  perf_event_header header;
  while (at + sizeof(header) <= bytes->size()) {
    std::memcpy(&header, data + at, sizeof(header));
    REQUIRE(header.size >= sizeof(header));
    if (header.type == format::perf::kFinishedRound) {
      log.add_records(pending);
      pending.clear();
      log.end_round();
    } else if (header.type < format::perf::kHeaderAttr) {
      pending.insert(pending.end(), data + at, data + at + header.size);
    }
    at += header.size;
  }
  log.add_records(pending);
  check_same_records(run.side_band, log.take());
}

namespace {

// Hand-made streams in the layout of a one-event file whose samples are
// (identifier, pid/tid, time) and whose other records carry the trailer
// (pid/tid, time, identifier).
constexpr uint64_t kId = 7;

perf_event_attr synthetic_attr() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_type =
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  return attr;
}

using runner::perfdata::testing::Bytes;

Bytes trailer(uint32_t pid, uint32_t tid, uint64_t time) {
  Bytes b;
  b.u32(pid).u32(tid).u64(time).u64(kId);
  return b;
}

Bytes sample(uint32_t pid, uint32_t tid, uint64_t time) {
  Bytes body;
  body.u64(kId).u32(pid).u32(tid).u64(time);
  return runner::perfdata::testing::record(PERF_RECORD_SAMPLE, 0, body);
}

Bytes task(bool is_exit, uint32_t pid, uint32_t ppid, uint32_t tid,
           uint64_t time) {
  Bytes body;
  body.u32(pid).u32(ppid).u32(tid).u32(ppid).u64(time);
  body.append(trailer(pid, tid, time));
  return runner::perfdata::testing::record(
      is_exit ? PERF_RECORD_EXIT : PERF_RECORD_FORK, 0, body);
}

Bytes mmap2(uint32_t pid, uint64_t addr, const std::string& path,
            uint64_t inode, uint64_t time) {
  Bytes body;
  body.u32(pid).u32(pid).u64(addr).u64(0x1000).u64(0);
  body.u32(0).u32(0).u64(inode).u64(0).u32(PROT_READ | PROT_EXEC).u32(0);
  body.str8(path);
  body.append(trailer(pid, pid, time));
  return runner::perfdata::testing::record(PERF_RECORD_MMAP2, 0, body);
}

Bytes comm_exec(uint32_t pid, uint64_t time) {
  Bytes body;
  body.u32(pid).u32(pid).str8("prog");
  body.append(trailer(pid, pid, time));
  return runner::perfdata::testing::record(PERF_RECORD_COMM,
                                           PERF_RECORD_MISC_COMM_EXEC, body);
}

// Rounds of records from a few pids (reused by new processes), their times
// out of order within a round and reaching into the rounds around it, as
// the buffers of several CPUs give them.
std::vector<uint8_t> random_stream(uint32_t seed, uint64_t inode) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  Bytes out = runner::perfdata::testing::pipe_header();
  out.append(runner::perfdata::testing::attr_record(synthetic_attr(), {kId}));
  const uint32_t rounds = 3 + pick(12);
  for (uint32_t round = 0; round < rounds; ++round) {
    const uint32_t n = pick(40);
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t base = 1000 + round * 100;
      const uint64_t time = pick(8) == 0 ? base - pick(250) : base + pick(150);
      const uint32_t pid = 100 + pick(5), other = 100 + pick(5);
      const uint32_t kind = pick(20);
      if (kind < 11) {
        out.append(sample(pid, pick(2) ? pid : pid + 50, time));
      } else if (kind < 13) {
        out.append(task(false, pid, other, pid, time));  // a new process
      } else if (kind < 14) {
        out.append(task(false, pid, pid, pid + 50, time));  // a thread
      } else if (kind < 16) {
        out.append(task(true, pid, other, pick(2) ? pid : pid + 50, time));
      } else if (kind < 19) {
        out.append(
            mmap2(pid, 0x400000 + 0x1000 * pick(4), "/bin/sh", inode, time));
      } else {
        out.append(comm_exec(pid, time));
      }
    }
    if (round + 1 < rounds || pick(2) == 0)
      out.append(Bytes().u32(format::perf::kFinishedRound).u16(0).u16(8));
  }
  return out.data();
}

}  // namespace

TEST_CASE("side-band records replay like the file: random streams") {
  TempDir dir;
  struct stat st {};
  REQUIRE(::stat("/bin/sh", &st) == 0);
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    INFO("seed " << seed);
    const std::string path = dir.file("random.pipedata");
    runner::perfdata::testing::write_bytes(path,
                                           random_stream(seed, st.st_ino));
    Recorded run;
    run.path = path;
    run.pid = 100;
    run.side_band = log_of_file(path, UINT64_MAX);
    REQUIRE_MESSAGE(run.side_band.usable(), run.side_band.incomplete);
    for (PidFilterMode mode : {PidFilterMode::kTracked, PidFilterMode::kAll}) {
      for (size_t limit : {SIZE_MAX, size_t{0}, size_t{1}, size_t{2}}) {
        MappingTracker from_file(mode, {100});
        MappingTracker from_log(mode, {100});
        from_file.set_unsampled_exited_limit(limit);
        from_log.set_unsampled_exited_limit(limit);
        REQUIRE(from_file.replay_file(path));
        REQUIRE(from_log.replay_records(run.side_band));
        check_same_mappings(from_file.mappings(), from_log.mappings());
        CHECK(from_file.tracked_pids() == from_log.tracked_pids());
        check_same_stats(from_file.stats(), from_log.stats());
      }
    }
  }
}
