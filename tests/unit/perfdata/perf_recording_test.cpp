// The reader and the tracker on real recordings made by perf 6.1 with the
// reference invocation (perf record -o - -k CLOCK_MONOTONIC --call-graph
// dwarf,8192 -F 997), cross-checked with `perf script`. Every test case is
// named "perf: ..." and runs in its own invocation of the binary; each one
// is skipped (alone, with the reason) when perf_event_open is refused.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <doctest/doctest.h>

#include "perfdata/perfdata.hpp"
#include "profiler/sampler.hpp"
#include "tests/support/libc.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner::profiler;
using namespace runner::perfdata;
using namespace runner::perfdata::testing;

namespace {

using SampleKey = std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t>;

// `perf script -F pid,tid,time,period,ip --ns -G` lines:
//  " 5706/5706   1410.245465701:    1003009      7fdd647c4158"
std::vector<SampleKey> perf_script_samples(const std::string& file,
                                           const std::string& scratch) {
  std::string text = run_capture({"perf", "script", "-i", file, "-F",
                                  "pid,tid,time,period,ip", "--ns", "-G"},
                                 scratch);
  std::vector<SampleKey> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    unsigned pid, tid;
    unsigned long long sec, nsec, period, ip;
    if (std::sscanf(line.c_str(), " %u/%u %llu.%llu: %llu %llx", &pid, &tid,
                    &sec, &nsec, &period, &ip) != 6)
      continue;
    out.emplace_back(pid, tid, sec * 1000000000ull + nsec, period, ip);
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// The workload's pid: perf execs it from its "perf-exec" child, so the first
// COMM with the exec flag names it.
int32_t workload_pid(const ReadAll& all) {
  for (const Record& r : all.records)
    if (r.kind == RecordKind::kComm && r.comm.exec)
      return static_cast<int32_t>(r.comm.pid);
  return -1;
}

bool has_exec_mmap(const ReadAll& all, uint32_t pid,
                   const std::string& path_part) {
  for (const Record& r : all.records)
    if (r.kind == RecordKind::kMmap2 && r.mmap.pid == pid &&
        (r.mmap.prot & PROT_EXEC) &&
        r.mmap.filename.find(path_part) != std::string::npos)
      return true;
  return false;
}

const TrackedMapping* find(const std::vector<TrackedMapping>& maps, int32_t pid,
                           const std::string& path) {
  for (const TrackedMapping& m : maps)
    if (m.pid == pid && m.path == path) return &m;
  return nullptr;
}

// `perf record` of hot_loop for 100 ms into `file`, read back whole.
ReadAll record_hot_loop(const std::string& file) {
  perf_record(file, {helper("hot_loop"), "100"});
  ReadAll all = read_all(file);
  REQUIRE(all.clean_eof);
  return all;
}

// Our Sampler (cpu-clock) on `fork_exec hot_loop 200`, from its exec to its
// exit, into `file`: its stats; *pid is the sampled process.
std::optional<runner::profiler::SamplerStats> sample_fork_exec(
    const std::string& file, SamplerOptions options, int32_t* pid) {
  runner::base::SpawnOptions spawn;
  spawn.argv = {helper("fork_exec"), helper("hot_loop"), "200"};
  spawn.suspended = true;
  auto child = runner::base::ChildProcess::spawn(spawn);
  REQUIRE(child);
  *pid = child->pid();
  options.event = runner::profiler::SamplingEvent::kCpuClock;
  auto sampler = Sampler::create(*pid, options, file);
  REQUIRE_MESSAGE(sampler, sampler.error().what());
  REQUIRE((*sampler)->enable());
  REQUIRE(child->release());
  auto status = child->wait();
  REQUIRE(status);
  CHECK(status->success());
  REQUIRE((*sampler)->disable());
  auto stats = (*sampler)->finish();
  REQUIRE(stats);
  return *stats;
}

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE("perf: a perf 6.1 pipe recording decodes like perf script") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("hot.pipedata");
    uint64_t before = monotonic_ns();
    perf_record(file, {helper("hot_loop"), "300"});
    uint64_t after = monotonic_ns();
    ReadAll all = read_all(file);
    INFO(all.error);
    REQUIRE(all.clean_eof);
    CHECK(all.stats.malformed_records == 0);
    CHECK(all.stats.unknown_id_samples == 0);

    REQUIRE(all.attrs.size() == 1);
    const perf_event_attr& attr = all.attrs[0].attr;
    // perf names the event cpu-clock:u when perf_event_paranoid makes it
    // exclude the kernel (an ordinary user at paranoid >= 2).
    const std::string name = all.attrs[0].name;
    CHECK((name == "cpu-clock" || name == "cpu-clock:u"));
    CHECK((name == "cpu-clock:u") == (all.attrs[0].attr.exclude_kernel == 1));
    CHECK(attr.type == PERF_TYPE_SOFTWARE);
    CHECK(attr.config == PERF_COUNT_SW_CPU_CLOCK);
    uint64_t needed = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                      PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |
                      PERF_SAMPLE_STACK_USER;
    CHECK((attr.sample_type & needed) == needed);
    CHECK(attr.sample_stack_user == 8192);
    CHECK(attr.sample_regs_user != 0);
    CHECK(attr.use_clockid == 1);
    CHECK(attr.clockid == CLOCK_MONOTONIC);
    CHECK(attr.freq == 1);
    CHECK(attr.sample_freq == 997);
    CHECK(attr.sample_id_all == 1);
    CHECK_FALSE(all.attrs[0].ids.empty());

    int32_t pid = workload_pid(all);
    REQUIRE(pid > 0);
    std::vector<SampleKey> ours;
    int regs_count = std::popcount(attr.sample_regs_user);
    size_t with_stack = 0;
    for (const Record& r : all.records) {
      if (r.kind != RecordKind::kSample) continue;
      const SampleRecord& s = r.sample;
      ours.emplace_back(s.pid, s.tid, s.time, s.period, s.ip);
      CHECK(s.pid == static_cast<uint32_t>(pid));
      CHECK(s.time > before);
      CHECK(s.time < after);
      CHECK(s.attr == all.reader->attr_for_id(s.id));
      if (s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
        CHECK(s.regs_abi == PERF_SAMPLE_REGS_ABI_64);
        CHECK(s.regs.size() == static_cast<size_t>(regs_count));
      }
      CHECK(s.stack.size() <= 8192);
      if (s.stack_size != 0) CHECK(s.stack_size == 8192);
      if (!s.stack.empty()) ++with_stack;
    }
    CHECK(ours.size() > 100);  // ~300 at 997 Hz
    CHECK(with_stack > ours.size() / 2);
    std::sort(ours.begin(), ours.end());
    CHECK(ours == perf_script_samples(file, dir.file("script.txt")));

    CHECK(has_exec_mmap(all, static_cast<uint32_t>(pid),
                        real_path(helper("hot_loop"))));
    const std::string libc = runner::testing::loaded_libc_path();
    REQUIRE_FALSE(libc.empty());
    CHECK(has_exec_mmap(all, static_cast<uint32_t>(pid), libc));
    size_t features = 0;
    for (const Record& r : all.records)
      if (r.kind == RecordKind::kFeature) ++features;
    CHECK(features > 5);
    CHECK(all.reader->features().size() == features);
  }

  TEST_CASE("perf: next_into with a reused Record reads what next() reads") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    const std::string file = dir.file("reuse.pipedata");
    ReadAll all = record_hot_loop(file);
    auto reader = PipedataReader::open(file);
    REQUIRE(reader);
    Record record;
    size_t index = 0, with_stack = 0;
    while (true) {
      auto more = reader->next_into(record, /*copy_stack=*/false);
      REQUIRE(more);
      if (!*more) break;
      REQUIRE(index < all.records.size());
      const Record& expected = all.records[index++];
      REQUIRE(record.kind == expected.kind);
      CHECK(record.type == expected.type);
      if (record.kind == RecordKind::kSample) {
        CHECK(record.sample.time == expected.sample.time);
        CHECK(record.sample.ip == expected.sample.ip);
        CHECK(record.sample.tid == expected.sample.tid);
        CHECK(record.sample.regs == expected.sample.regs);
        CHECK(record.sample.callchain == expected.sample.callchain);
        // The stack is lent from the reader's buffer, not copied.
        CHECK(record.sample.stack.empty());
        std::span<const uint8_t> lent = reader->last_stack();
        CHECK(std::equal(lent.begin(), lent.end(),
                         expected.sample.stack.begin(),
                         expected.sample.stack.end()));
        if (!lent.empty()) ++with_stack;
      } else {
        CHECK(reader->last_stack().empty());
        if (record.kind == RecordKind::kMmap2)
          CHECK(record.mmap.filename == expected.mmap.filename);
        if (record.kind == RecordKind::kComm)
          CHECK(record.comm.comm == expected.comm.comm);
      }
    }
    CHECK(index == all.records.size());
    CHECK(with_stack > 10);
  }

  TEST_CASE("perf: a FIFO is read like the file (no mapping, read() path)") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    const std::string file = dir.file("fifo-src.pipedata");
    ReadAll from_file = record_hot_loop(file);
    const std::string fifo = dir.file("stream");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto bytes = runner::base::read_file(file);
    REQUIRE(bytes);
    // The writer feeds the FIFO in small pieces while the reader reads.
    std::thread writer([&] {
      int fd = ::open(fifo.c_str(), O_WRONLY);
      if (fd < 0) return;
      for (size_t at = 0; at < bytes->size(); at += 4093) {
        size_t n = std::min<size_t>(4093, bytes->size() - at);
        if (::write(fd, bytes->data() + at, n) != static_cast<ssize_t>(n))
          break;
      }
      ::close(fd);
    });
    ReadAll from_fifo = read_all(fifo);
    writer.join();
    CHECK(from_fifo.clean_eof);
    REQUIRE(from_fifo.records.size() == from_file.records.size());
    for (size_t i = 0; i < from_file.records.size(); ++i) {
      CHECK(from_fifo.records[i].type == from_file.records[i].type);
      if (from_file.records[i].kind == RecordKind::kSample)
        CHECK(from_fifo.records[i].sample.stack ==
              from_file.records[i].sample.stack);
    }
  }

  TEST_CASE("perf: a real recording cut anywhere never breaks the reader") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("full.pipedata");
    perf_record(file, {helper("hot_loop"), "100"});
    auto bytes = runner::base::read_file(file);
    REQUIRE(bytes);
    std::vector<uint8_t> data(bytes->begin(), bytes->end());
    ReadAll full = read_all(file);
    REQUIRE(full.clean_eof);
    std::vector<size_t> cuts;
    for (size_t c = 0; c <= std::min<size_t>(4096, data.size()); ++c)
      cuts.push_back(c);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 200; ++i) cuts.push_back(rng() % data.size());
    std::string path = dir.file("cut.pipedata");
    size_t clean = 0;
    for (size_t cut : cuts) {
      CAPTURE(cut);
      write_bytes(path, std::vector<uint8_t>(data.begin(), data.begin() + cut));
      ReadAll r = read_all(path, full.records.size() + 1);
      if (cut < 16) {
        CHECK_FALSE(r.opened);
        continue;
      }
      REQUIRE(r.opened);
      CHECK((r.clean_eof || !r.error.empty()));
      CHECK(r.clean_eof == r.error.empty());
      REQUIRE(r.records.size() <= full.records.size());
      CHECK(r.stats.bytes <= cut);
      if (r.clean_eof) {
        ++clean;
        CHECK(r.stats.bytes == cut);
      }
      if (!r.records.empty()) {
        const Record& last = r.records.back();
        const Record& same = full.records[r.records.size() - 1];
        CHECK(last.type == same.type);
        if (last.kind == RecordKind::kSample) {
          CHECK(last.sample.time == same.sample.time);
          CHECK(last.sample.stack == same.sample.stack);
        }
      }
    }
    CHECK(clean > 0);
  }

  TEST_CASE("perf: a perf.data file (not pipe mode) is rejected clearly") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("x.data");
    auto status = run_to_file(
        {"perf", "record", "-o", file, "-e", "cpu-clock", "--", "/bin/true"},
        dir.file("out"), dir.file("err"));
    REQUIRE(status);
    REQUIRE(status->success());
    ReadAll r = read_all(file);
    CHECK_FALSE(r.opened);
    CHECK(r.error.find("not pipe mode") != std::string::npos);
  }

  TEST_CASE("perf: forked children are decoded and tracked") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("fork.pipedata");
    perf_record(file, {helper("fork_children"), "3", "150"});
    ReadAll all = read_all(file);
    REQUIRE(all.clean_eof);
    int32_t parent = workload_pid(all);
    REQUIRE(parent > 0);
    std::set<int32_t> children, sampled;
    for (const Record& r : all.records) {
      if (r.kind == RecordKind::kTask && !r.task.is_exit &&
          r.task.ppid == static_cast<uint32_t>(parent) &&
          r.task.pid != r.task.ppid)
        children.insert(static_cast<int32_t>(r.task.pid));
      if (r.kind == RecordKind::kSample)
        sampled.insert(static_cast<int32_t>(r.sample.pid));
    }
    REQUIRE(children.size() == 3);
    CHECK(sampled.size() >= 3);

    MappingTracker t(PidFilterMode::kTracked, {parent});
    REQUIRE(t.replay_file(file));
    std::set<int32_t> expected = children;
    expected.insert(parent);
    CHECK(t.tracked_pids() == expected);
    auto maps = t.mappings();
    std::string exe = real_path(helper("fork_children"));
    const TrackedMapping* parent_exe = find(maps, parent, exe);
    REQUIRE(parent_exe != nullptr);
    for (int32_t child : children) {
      CAPTURE(child);
      const TrackedMapping* m = find(maps, child, exe);
      REQUIRE(m != nullptr);  // inherited through FORK
      CHECK(m->start == parent_exe->start);
      CHECK(m->pgoff == parent_exe->pgoff);
    }
    CHECK(t.stats().forks >= 3);
    CHECK(t.stats().exits >= 3);

    // Another pid announced: nothing of this run is taken.
    MappingTracker other(PidFilterMode::kTracked, {1});
    REQUIRE(other.replay_file(file));
    CHECK(other.mappings().empty());
    CHECK(other.stats().skipped.at("pid_filtered") > 0);
  }

  TEST_CASE(
      "perf: fork + exec: the exec'd program's mappings are "
      "attributed to the child") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("exec.pipedata");
    perf_record(file, {helper("fork_exec"), helper("hot_loop"), "150"});
    ReadAll all = read_all(file);
    REQUIRE(all.clean_eof);
    int32_t parent = workload_pid(all);
    REQUIRE(parent > 0);
    int32_t child = -1;
    for (const Record& r : all.records)
      if (r.kind == RecordKind::kTask && !r.task.is_exit &&
          r.task.ppid == static_cast<uint32_t>(parent) &&
          r.task.pid != r.task.ppid)
        child = static_cast<int32_t>(r.task.pid);
    REQUIRE(child > 0);

    std::string parent_exe = real_path(helper("fork_exec"));
    std::string child_exe = real_path(helper("hot_loop"));
    for (PidFilterMode mode : {PidFilterMode::kTracked, PidFilterMode::kAll}) {
      MappingTracker t(mode, {parent});
      REQUIRE(t.replay_file(file));
      CHECK(t.tracked_pids().count(child) == 1);
      auto maps = t.mappings();
      CHECK(find(maps, parent, parent_exe) != nullptr);
      CHECK(find(maps, parent, child_exe) == nullptr);
      // The exec dropped what the child inherited from fork_exec.
      CHECK(find(maps, child, parent_exe) == nullptr);
      const TrackedMapping* m = find(maps, child, child_exe);
      REQUIRE(m != nullptr);
      CHECK(m->source == TrackedMapping::Source::kMmap2);
      CHECK(m->inode != 0);
      CHECK(m->open_path == child_exe);
      const std::string libc = runner::testing::loaded_libc_path();
      REQUIRE_FALSE(libc.empty());
      bool child_libc = false;
      for (const TrackedMapping& x : maps)
        if (x.pid == child && x.path == libc) child_libc = true;
      CHECK(child_libc);
      CHECK(t.stats().comm_exec >= 2);  // perf-exec -> fork_exec, then child
      CHECK(t.stats().skipped.at("not_executable") > 0);
    }

    // The same run cut in half: what was read is kept and the break is
    // reported.
    auto bytes = runner::base::read_file(file);
    REQUIRE(bytes);
    write_bytes(dir.file("half.pipedata"),
                std::vector<uint8_t>(bytes->begin(),
                                     bytes->begin() + bytes->size() / 2 + 3));
    MappingTracker half(PidFilterMode::kTracked, {parent});
    CHECK_FALSE(half.replay_file(dir.file("half.pipedata")));
    CHECK(half.stats().replay_errors == 1);
    CHECK(find(half.mappings(), parent, parent_exe) != nullptr);
  }

  TEST_CASE("perf: fork + exec of /bin/true") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("true.pipedata");
    perf_record(file, {helper("fork_exec"), "/bin/true"});
    MappingTracker t(PidFilterMode::kAll, {});
    REQUIRE(t.replay_file(file));
    std::string true_exe = real_path("/bin/true");
    bool found = false;
    for (const TrackedMapping& m : t.mappings())
      if (m.path == true_exe) found = true;
    CHECK(found);
    CHECK(t.tracked_pids().size() >= 2);
  }

  TEST_CASE("perf: our Sampler's pipedata reads like perf's") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("ours.pipedata");
    int32_t pid = 0;
    auto stats = sample_fork_exec(file, SamplerOptions{}, &pid);

    ReadAll all = read_all(file);
    INFO(all.error);
    REQUIRE(all.clean_eof);
    CHECK(all.stats.malformed_records == 0);
    CHECK(all.stats.unknown_id_samples == 0);
    CHECK(all.stats.bytes == stats->bytes_written);
    REQUIRE(all.attrs.size() >= 1);
    std::vector<SampleKey> ours;
    for (const Record& r : all.records) {
      if (r.kind != RecordKind::kSample) continue;
      const SampleRecord& s = r.sample;
      REQUIRE(s.attr != nullptr);
      ours.emplace_back(s.pid, s.tid, s.time, s.period, s.ip);
      if (s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE)
        CHECK(s.regs.size() == static_cast<size_t>(std::popcount(
                                   s.attr->attr.sample_regs_user)));
      CHECK(s.stack.size() <= s.stack_size);
    }
    CHECK(ours.size() == stats->samples);
    CHECK(ours.size() > 100);
    std::sort(ours.begin(), ours.end());
    CHECK(ours == perf_script_samples(file, dir.file("script.txt")));

    MappingTracker t(PidFilterMode::kTracked, {pid});
    REQUIRE(t.replay_file(file));
    CHECK(t.tracked_pids().size() == 2);
    std::string child_exe = real_path(helper("hot_loop"));
    bool exec_attributed = false;
    for (const TrackedMapping& m : t.mappings())
      if (m.pid != pid && m.path == child_exe) exec_attributed = true;
    CHECK(exec_attributed);
    CHECK(find(t.mappings(), pid, real_path(helper("fork_exec"))) != nullptr);
  }

  TEST_CASE("perf: a perf record -z recording decodes like perf script") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("z.pipedata");
    perf_record(file, {helper("hot_loop"), "300"}, {"-z"});
    ReadAll all = read_all(file);
    INFO(all.error);
    REQUIRE(all.clean_eof);
    CHECK(all.stats.compressed_records > 0);
    CHECK(all.stats.decompressed_bytes > all.stats.bytes);
    CHECK(all.stats.malformed_records == 0);
    CHECK(all.stats.undecoded_compressed_bytes == 0);
    std::vector<SampleKey> ours;
    for (const Record& r : all.records)
      if (r.kind == RecordKind::kSample)
        ours.emplace_back(r.sample.pid, r.sample.tid, r.sample.time,
                          r.sample.period, r.sample.ip);
    CHECK(ours.size() > 100);
    std::sort(ours.begin(), ours.end());
    CHECK(ours == perf_script_samples(file, dir.file("script.txt")));
    CHECK(workload_pid(all) > 0);
  }

  TEST_CASE("perf: our Sampler's compressed pipedata reads like perf's") {
    RUNNER_SKIP_CASE_UNLESS_PERF_EVENTS();
    runner::testing::TempDir dir;
    std::string file = dir.file("ours.pipedata");
    SamplerOptions options;
    options.compress_level = 3;
    int32_t pid = 0;
    auto stats = sample_fork_exec(file, options, &pid);
    CHECK(stats->compress_level == 3);
    CHECK(stats->compressed_bytes > 0);
    CHECK(stats->compressed_bytes * 2 < stats->uncompressed_bytes);

    ReadAll all = read_all(file);
    INFO(all.error);
    REQUIRE(all.clean_eof);
    CHECK(all.stats.bytes == stats->bytes_written);
    CHECK(all.stats.decompressed_bytes == stats->uncompressed_bytes);
    CHECK(all.stats.malformed_records == 0);
    CHECK(all.stats.unknown_id_samples == 0);
    std::vector<SampleKey> ours;
    for (const Record& r : all.records)
      if (r.kind == RecordKind::kSample)
        ours.emplace_back(r.sample.pid, r.sample.tid, r.sample.time,
                          r.sample.period, r.sample.ip);
    CHECK(ours.size() == stats->samples);
    CHECK(ours.size() > 100);
    std::sort(ours.begin(), ours.end());
    CHECK(ours == perf_script_samples(file, dir.file("script.txt")));
  }
}
