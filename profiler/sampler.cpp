#include "profiler/sampler.hpp"

#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "profiler/event_attrs.hpp"
#include "profiler/perf_event.hpp"
#include "profiler/pipedata_writer.hpp"
#include "profiler/probe.hpp"
#include "profiler/ring_buffer.hpp"
#include "profiler/side_band_log.hpp"
#include "profiler/stack_blanker.hpp"

namespace runner::profiler {
namespace {

// Between benchmark windows the buffers are drained this often (side-band
// records only). Inside windows only the watermark wakes the drain thread:
// a pass with nothing to do would still take the CPU from the benchmark.
constexpr int kDrainTimeoutMs = 100;
// enable() waits this long at most for the drain of the previous window's
// records, so that a window starts with empty buffers and an idle thread.
constexpr auto kDrainBeforeEnable = std::chrono::milliseconds(500);
constexpr const char* kTrackingName = "dummy:u";

uint64_t page_size() { return static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)); }

uint64_t now_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL +
         static_cast<uint64_t>(ts.tv_nsec);
}

base::Error open_error(base::Error error) {
  std::string text = error.message() + ": " + explain_open_error(error.code());
  return base::Error(std::move(text), error.code());
}

bool is_missing_event_error(int err) {
  return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL;
}

base::Result<EventChoice> choose_event(const SamplerOptions& options, pid_t pid,
                                       int cpu) {
  const EventChoice cycles = cycles_event();
  const EventChoice cpu_clock = cpu_clock_event();
  switch (options.event) {
    case SamplingEvent::kCycles:
      return cycles;
    case SamplingEvent::kCpuClock:
      return cpu_clock;
    case SamplingEvent::kTaskClock:
      return task_clock_event();
    case SamplingEvent::kAuto:
      break;
  }
  // auto: probe cycles with the real attributes (disabled, never mmapped).
  auto probe =
      PerfEvent::open(sampling_attr(options, cycles, kMinMmapSize), pid, cpu);
  if (probe) return cycles;
  if (!is_missing_event_error(probe.error().code()))
    return open_error(std::move(probe).error());
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    RUNNER_LOG("profiler", kInfo)
        << "no hardware cycles event (" << probe.error().what()
        << "), sampling cpu-clock";
  }
  return cpu_clock;
}

uint64_t total_mem_kb() {
  auto text = base::read_file("/proc/meminfo");
  if (!text) return 0;
  size_t pos = text->find("MemTotal:");
  if (pos == std::string::npos) return 0;
  return std::strtoull(text->c_str() + pos + 9, nullptr, 10);
}

using format::perf::EventDesc;

void write_features(PipedataWriter& writer, const SamplerOptions& options,
                    const std::vector<EventDesc>& events) {
  utsname uts{};
  ::uname(&uts);
  writer.write_feature(format::perf::kFeatHostname,
                       FeatureBuilder().add_string(uts.nodename).bytes());
  writer.write_feature(format::perf::kFeatOsRelease,
                       FeatureBuilder().add_string(uts.release).bytes());
  writer.write_feature(format::perf::kFeatVersion,
                       FeatureBuilder().add_string("runner").bytes());
  writer.write_feature(format::perf::kFeatArch,
                       FeatureBuilder().add_string(uts.machine).bytes());
  // nr_cpus_avail (configured) then nr_cpus_online.
  const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  writer.write_feature(format::perf::kFeatNrCpus,
                       FeatureBuilder()
                           .add_u32(static_cast<uint32_t>(configured))
                           .add_u32(static_cast<uint32_t>(online))
                           .bytes());
  if (uint64_t mem = total_mem_kb(); mem != 0)
    writer.write_feature(format::perf::kFeatTotalMem,
                         FeatureBuilder().add_u64(mem).bytes());
  // Never the process's own command line: the benchmark's arguments follow
  // the runner's there.
  FeatureBuilder cmdline;
  const std::vector<std::string> args = options.cmdline.empty()
                                            ? std::vector<std::string>{"runner"}
                                            : options.cmdline;
  cmdline.add_u32(static_cast<uint32_t>(args.size()));
  for (const std::string& arg : args) cmdline.add_string(arg);
  writer.write_feature(format::perf::kFeatCmdline, cmdline.align().bytes());
  writer.write_feature(format::perf::kFeatEventDesc,
                       format::perf::encode_event_desc(events));
  // clockid: resolution in ns of the sample clock.
  timespec res{};
  ::clock_getres(CLOCK_MONOTONIC, &res);
  uint64_t res_ns = static_cast<uint64_t>(res.tv_sec) * 1000000000ULL +
                    static_cast<uint64_t>(res.tv_nsec);
  writer.write_feature(
      format::perf::kFeatClockId,
      FeatureBuilder().add_u64(res_ns == 0 ? 1 : res_ns).bytes());
  // clock_data: version 1, clockid, wall-clock ns, clockid ns (taken
  // together, so timestamps can be mapped to wall time).
  const uint64_t tod = now_ns(CLOCK_REALTIME);
  const uint64_t mono = now_ns(CLOCK_MONOTONIC);
  writer.write_feature(format::perf::kFeatClockData,
                       FeatureBuilder()
                           .add_u32(1)
                           .add_u32(CLOCK_MONOTONIC)
                           .add_u64(tod)
                           .add_u64(mono)
                           .bytes());
}

}  // namespace

struct Sampler::Impl {
  struct CpuBuffer {
    int cpu = 0;
    PerfEvent sampling;
    PerfEvent tracking;
    RingBuffer ring;
  };

  SamplerOptions options;
  std::string event_name;
  std::vector<CpuBuffer> cpus;
  PipedataWriter writer;
  base::UniqueFd epoll_fd;
  base::UniqueFd wake_fd;
  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<bool> sampling{false};  // inside a window
  bool finished = false;
  mutable std::mutex mutex;
  std::condition_variable drained;  // signalled after every pass
  SamplerStats stats;
  // What a pass counted, per buffer.
  struct PassCounts {
    uint64_t samples = 0, lost_records = 0, lost_samples = 0, records = 0;
  };
  // The buffers one drain thread takes out in each pass. The first group's
  // thread is the one in run(); the others' copy their records aside.
  struct DrainGroup {
    size_t first = 0, end = 0;  // buffers [first, end)
    StackBlanker::RewriteState rewrite;
    RecordPieces pieces;
    std::vector<uint8_t> aside;
    std::thread thread;
    uint64_t cpu_ns = 0;  // the thread's CPU time, once it stopped
  };

  // The drain's: what it writes instead of the kernel's samples (stack
  // copies cut to the program's stack), each buffer's heads for the pass,
  // where its walk stopped, time of its last record and counts.
  std::unique_ptr<StackBlanker> blanker;
  std::vector<uint64_t> heads, stops, ring_times;
  const std::vector<uint8_t> finished_round =
      format::perf::encode_finished_round();
  std::vector<PassCounts> buffer_counts;
  std::vector<std::unique_ptr<DrainGroup>> groups;
  // A pass for the other groups: its number, how many are still at it.
  std::mutex group_mutex;
  std::condition_variable group_cv;
  uint64_t group_pass = 0;
  size_t groups_busy = 0;
  bool groups_stop = false;
  // What the mapping replay reads, fed in the file's order by run()'s
  // thread (the other groups' records once they are set aside).
  std::unique_ptr<SideBandLog> side_band;
  // Without the tracking event, execs outside windows go unseen: each
  // window's start (CLOCK_MONOTONIC) makes every process's area be read
  // again.
  std::atomic<uint64_t> window_start_ns{0};
  uint64_t barrier_ns = 0;

  // What open_buffers() opened: the final attrs (after any shrink), the ids
  // of the events and the buffer size they got.
  struct OpenedEvents {
    perf_event_attr sample_attr{};
    perf_event_attr track_attr{};
    std::vector<uint64_t> sample_ids, track_ids;
    uint64_t mmap_size = 0;
    bool shrunk = false;
  };

  // The steps of Sampler::create, in order.
  base::Result<OpenedEvents> open_buffers(pid_t pid, const EventChoice& event,
                                          const std::vector<int>& cpu_list);
  base::Status open_tracking(const perf_event_attr& attr, pid_t pid,
                             CpuBuffer& buffer, std::vector<uint64_t>& ids);
  static base::Error mmap_error(base::Error error, int cpu);
  void record_buffer_stats(const EventChoice& event,
                           const OpenedEvents& opened);
  base::Status write_header(const std::string& output_path,
                            const EventChoice& event,
                            const OpenedEvents& opened);
  base::Status start_drain_thread();

  // The drain threads are stopped by finish(); here too when create()
  // failed after they started.
  ~Impl() {
    if (thread.joinable()) {
      stop.store(true, std::memory_order_release);
      wake();
      thread.join();
    }
    stop_groups();
  }

  void run();
  // in_window: a pass the benchmark pays for (counted in the stats).
  bool drain_pass(bool in_window = false);
  // The first steps of a pass: the heads to drain to, and what the blanker
  // must know before it rewrites the records up to them.
  void prepare_pass();
  // One buffer's records up to its head, rewritten and added to
  // `group.pieces`, and counted; returns where the walk stopped (for
  // release()).
  uint64_t collect_buffer(size_t index, DrainGroup& group);
  // Writes what a pass collected with one write: the first group's
  // records, straight from the mappings, then the other groups' set aside
  // and the round marker; then gives the first group's buffers back.
  bool write_pass();
  // Copies a group's records aside and gives them back.
  void set_aside(DrainGroup& group);
  // The other groups' part of a pass, and their threads.
  void run_group(DrainGroup& group);
  void start_groups();
  void wait_groups();
  void stop_groups();
  void split_groups(uint32_t threads);
  // Sums a pass's counts into stats (under the mutex).
  void record_pass(bool in_window);
  void wake();
  // The writer's counters into stats (under the mutex).
  void record_writer_stats();
};

void Sampler::Impl::record_writer_stats() {
  stats.bytes_written = writer.bytes_written();
  stats.bytes_dropped = writer.bytes_dropped();
  stats.compress_level = writer.compression_level();
  stats.uncompressed_bytes = writer.uncompressed_bytes();
  stats.compressed_bytes = writer.compressed_bytes();
  if (writer.failed() && !stats.write_failed) {
    stats.write_failed = true;
    stats.write_error = writer.error();
  }
}

void Sampler::Impl::prepare_pass() {
  heads.resize(cpus.size());
  stops.resize(cpus.size());
  ring_times.resize(cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) heads[i] = cpus[i].ring.head();
  if (!blanker || !blanker->active()) return;
  blanker->begin_pass();
  // Read after the heads: a sample up to them that a window enabled comes
  // after that window's start was stored.
  const uint64_t window = window_start_ns.load(std::memory_order_acquire);
  if (!options.tracking_event && window != barrier_ns) {
    blanker->barrier(window);
    barrier_ns = window;
  }
  for (size_t i = 0; i < cpus.size(); ++i) {
    const RingBuffer& ring = cpus[i].ring;
    ring.walk(ring.tail(), heads[i],
              [&](const perf_event_header& header,
                  const RingBuffer::RecordBytes& bytes) {
                blanker->scan(header, bytes, true, &ring_times[i]);
              });
  }
  blanker->learn();
  // Every exec and fork published before the reads ended is now in the
  // buffers: note those past the heads too.
  for (size_t i = 0; i < cpus.size(); ++i) {
    const RingBuffer& ring = cpus[i].ring;
    ring.walk(heads[i], ring.head(),
              [&](const perf_event_header& header,
                  const RingBuffer::RecordBytes& bytes) {
                blanker->scan(header, bytes, false, &ring_times[i]);
              });
  }
  blanker->resolve();
}

uint64_t Sampler::Impl::collect_buffer(size_t index, DrainGroup& group) {
  RingBuffer& ring = cpus[index].ring;
  PassCounts& counts = buffer_counts[index];
  counts = {};
  return ring.walk(
      ring.tail(), heads[index],
      [&](const perf_event_header& header,
          const RingBuffer::RecordBytes& bytes) {
        ++counts.records;
        if (header.type == PERF_RECORD_SAMPLE) {
          ++counts.samples;
        } else if (header.type == PERF_RECORD_LOST) {
          uint64_t lost = 0;
          if (bytes.read(format::perf::kLostCountOffset, &lost, sizeof(lost))) {
            ++counts.lost_records;
            counts.lost_samples += lost;
          }
        }
        blanker->rewrite(header, bytes, group.pieces, group.rewrite);
        if (!side_band || &group != groups.front().get()) return;
        if (group.rewrite.located)
          side_band->add_sample(*group.rewrite.located);
        else
          side_band->add(header, bytes);
      });
}

void Sampler::Impl::set_aside(DrainGroup& group) {
  group.aside.clear();
  for (size_t i = group.first; i < group.end; ++i) {
    group.pieces.clear();
    const uint64_t stopped = collect_buffer(i, group);
    for (const auto& piece : group.pieces.pieces())
      group.aside.insert(group.aside.end(), piece.begin(), piece.end());
    cpus[i].ring.release(stopped, heads[i]);
  }
}

void Sampler::Impl::start_groups() {
  if (groups.size() < 2) return;
  std::lock_guard<std::mutex> lock(group_mutex);
  ++group_pass;
  groups_busy = groups.size() - 1;
  group_cv.notify_all();
}

void Sampler::Impl::wait_groups() {
  if (groups.size() < 2) return;
  std::unique_lock<std::mutex> lock(group_mutex);
  group_cv.wait(lock, [&] { return groups_busy == 0; });
}

bool Sampler::Impl::drain_pass(bool in_window) {
  prepare_pass();
  start_groups();
  DrainGroup& own = *groups.front();
  own.pieces.clear();
  for (size_t i = own.first; i < own.end; ++i)
    stops[i] = collect_buffer(i, own);
  wait_groups();
  const bool wrote = write_pass();
  record_pass(in_window);
  return wrote;
}

bool Sampler::Impl::write_pass() {
  DrainGroup& own = *groups.front();
  for (size_t g = 1; g < groups.size(); ++g) {
    const std::vector<uint8_t>& aside = groups[g]->aside;
    own.pieces.add(aside);
    if (side_band) side_band->add_records(aside);
  }
  bool wrote = false;
  for (const PassCounts& counts : buffer_counts) wrote |= counts.records > 0;
  // A round marker lets perf sort and flush what it has read so far: every
  // record of a later pass is newer than all records of the pass before.
  if (wrote) {
    own.pieces.add(finished_round);
    if (side_band) side_band->end_round();
  }
  // The kernel gets the space back only after the write returns.
  if (own.pieces.size() > 0) writer.write_records(own.pieces.pieces());
  if (wrote) writer.flush();
  for (size_t i = own.first; i < own.end; ++i)
    cpus[i].ring.release(stops[i], heads[i]);
  return wrote;
}

void Sampler::Impl::record_pass(bool in_window) {
  uint64_t bad = 0;
  for (const CpuBuffer& buffer : cpus) bad += buffer.ring.bad_records();
  std::lock_guard<std::mutex> lock(mutex);
  for (size_t i = 0; i < buffer_counts.size(); ++i) {
    const PassCounts& counts = buffer_counts[i];
    stats.samples += counts.samples;
    stats.lost_records += counts.lost_records;
    stats.lost_samples += counts.lost_samples;
    stats.records += counts.records;
    stats.per_cpu[i].samples += counts.samples;
    stats.per_cpu[i].lost_samples += counts.lost_samples;
  }
  stats.drain_passes += 1;
  if (in_window) stats.window_drain_passes += 1;
  stats.bad_records = bad;
  stats.blanking = blanker->stats();
  for (const auto& group : groups) stats.blanking.add(group->rewrite.stats);
  record_writer_stats();
  drained.notify_all();
}

void Sampler::Impl::wake() {
  const uint64_t one = 1;
  (void)!::write(wake_fd.get(), &one, sizeof(one));
}

namespace {

// The drain thread must not be starved by the benchmark it samples, whose
// threads may keep every CPU busy: a buffer it does not empty in time loses
// samples. Its nice value is lowered to kDrainNice where that is allowed
// (root, CAP_SYS_NICE); elsewhere it keeps the process's.
constexpr int kDrainNice = -10;

int raise_drain_priority() {
  const auto tid = static_cast<id_t>(::gettid());
  if (::setpriority(PRIO_PROCESS, tid, kDrainNice) == 0) return kDrainNice;
  RUNNER_LOG("profiler", kDebug)
      << "the drain thread keeps its priority: " << std::strerror(errno);
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, tid);
  return errno == 0 ? nice : 0;
}

}  // namespace

void Sampler::Impl::run() {
  const int nice = raise_drain_priority();
  {
    std::lock_guard<std::mutex> lock(mutex);
    stats.drain_nice = nice;
  }
  std::vector<epoll_event> events(cpus.size() + 1);
  uint64_t wake_count = 0;
  // Once the sampled root is gone its fds report EPOLLHUP forever and are
  // no longer polled, so their watermark wake-ups are lost: from then on
  // the periodic pass runs inside windows too (children may live on).
  bool all_watched = true;
  while (!stop.load(std::memory_order_acquire)) {
    const bool in_window = sampling.load(std::memory_order_acquire);
    const int timeout = in_window && all_watched ? -1 : kDrainTimeoutMs;
    int n = ::epoll_wait(epoll_fd.get(), events.data(),
                         static_cast<int>(events.size()), timeout);
    bool requested = false, watermark = false;
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd.get()) {
        (void)!::read(wake_fd.get(), &wake_count, sizeof(wake_count));
        requested = true;
      } else if ((events[i].events & (EPOLLHUP | EPOLLERR)) != 0) {
        ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, events[i].data.fd, nullptr);
        all_watched = false;
      } else {
        watermark = true;
      }
    }
    // enable()/disable()/finish() ask for a pass at the window's edge; the
    // others are a buffer's watermark or the periodic pass.
    if (requested || watermark || n == 0)
      drain_pass(/*in_window=*/in_window && !requested);
  }
  drain_pass();
  groups.front()->cpu_ns = base::cpu_time_ns(RUSAGE_THREAD);
}

void Sampler::Impl::split_groups(uint32_t threads) {
  const size_t n = cpus.size();
  threads = std::clamp<uint32_t>(threads, 1, static_cast<uint32_t>(n));
  for (uint32_t g = 0; g < threads; ++g) {
    auto group = std::make_unique<DrainGroup>();
    group->first = n * g / threads;
    group->end = n * (g + 1) / threads;
    groups.push_back(std::move(group));
  }
  buffer_counts.resize(n);
  stats.drain_threads = threads;
  for (const CpuBuffer& buffer : cpus) stats.per_cpu.push_back({buffer.cpu});
}

void Sampler::Impl::run_group(DrainGroup& group) {
  raise_drain_priority();
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(group_mutex);
      group_cv.wait(lock, [&] { return groups_stop || group_pass != seen; });
      if (groups_stop) break;
      seen = group_pass;
    }
    set_aside(group);
    std::lock_guard<std::mutex> lock(group_mutex);
    --groups_busy;
    group_cv.notify_all();
  }
  group.cpu_ns = base::cpu_time_ns(RUSAGE_THREAD);
}

void Sampler::Impl::stop_groups() {
  {
    std::lock_guard<std::mutex> lock(group_mutex);
    groups_stop = true;
    group_cv.notify_all();
  }
  for (const auto& group : groups)
    if (group->thread.joinable()) group->thread.join();
}

uint32_t drain_threads_for(const SamplerOptions& options, size_t nr_cpus) {
  const auto cpus = static_cast<uint32_t>(std::max<size_t>(nr_cpus, 1));
  if (options.drain_threads != 0) return std::min(options.drain_threads, cpus);
  const uint64_t rate = uint64_t{options.frequency} * cpus;
  const auto wanted = static_cast<uint32_t>(
      (rate + kSamplesPerDrainThread - 1) / kSamplesPerDrainThread);
  return std::clamp<uint32_t>(wanted, 1, std::max<uint32_t>(1, cpus / 2));
}

uint64_t default_mmap_size(const SamplerOptions& options) {
  const uint64_t wanted = uint64_t{options.frequency} *
                          sample_record_bytes(options) * kDefaultBufferMs /
                          1000;
  // The nearest power of two (buffer sizes must be one).
  uint64_t size = wanted == 0 ? 0 : std::bit_floor(wanted);
  if (wanted - size > size / 2) size *= 2;
  return std::clamp<uint64_t>(size, kMinMmapSize, kMaxDefaultMmapSize);
}

base::Status validate_options(const SamplerOptions& options) {
  if (options.frequency == 0)
    return base::Error("sampling frequency must be > 0", EINVAL);
  if (options.call_graph == CallGraphMode::kDwarf) {
    if (options.stack_size == 0 || options.stack_size % 8 != 0 ||
        options.stack_size > format::perf::kMaxStackSize) {
      return base::Error("dwarf stack size " +
                             std::to_string(options.stack_size) +
                             " is invalid: it must be a multiple of 8 "
                             "between 8 and " +
                             std::to_string(format::perf::kMaxStackSize),
                         EINVAL);
    }
  }
  if (options.drain_threads > kMaxDrainThreads)
    return base::Error(
        "drain threads " + std::to_string(options.drain_threads) +
            " is invalid: at most " + std::to_string(kMaxDrainThreads),
        EINVAL);
  if (options.compress_level != 0 &&
      (options.compress_level < RecordCompressor::kMinLevel ||
       options.compress_level > RecordCompressor::kMaxLevel))
    return base::Error("zstd level " + std::to_string(options.compress_level) +
                           " is invalid: it must be between 1 and 19",
                       EINVAL);
  if (options.mmap_size != 0) {
    const uint64_t page = page_size();
    if (options.mmap_size < page || options.mmap_size % page != 0 ||
        (options.mmap_size & (options.mmap_size - 1)) != 0) {
      return base::Error("mmap size " + std::to_string(options.mmap_size) +
                             " must be a power-of-two number of " +
                             std::to_string(page) + "-byte pages",
                         EINVAL);
    }
    if (options.mmap_size > (1ULL << 32))
      return base::Error("mmap size " + std::to_string(options.mmap_size) +
                             " is larger than 4 GiB per CPU",
                         EINVAL);
  }
  return {};
}

base::Result<std::unique_ptr<Sampler>> Sampler::create(
    pid_t pid, const SamplerOptions& options, const std::string& output_path) {
  RUNNER_RETURN_IF_ERROR(validate_options(options), "sampler options");
  RUNNER_ASSIGN_OR_RETURN(std::vector<int> cpus, online_cpus(), "sampler");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  RUNNER_ASSIGN_OR_RETURN(EventChoice event,
                          choose_event(options, pid, cpus.front()),
                          "choosing the sampling event");
  impl->event_name = event.name;
  auto opened = impl->open_buffers(pid, event, cpus);
  if (!opened) return std::move(opened).error();
  impl->record_buffer_stats(event, *opened);
  if (auto st = impl->write_header(output_path, event, *opened); !st)
    return std::move(st).error();
  if (auto st = impl->start_drain_thread(); !st) return std::move(st).error();
  return std::unique_ptr<Sampler>(new Sampler(std::move(impl)));
}

// The locked-memory budget (perf_event_mlock_kb per CPU, summed over the
// user's buffers, plus RLIMIT_MEMLOCK) is shared by all CPUs: when any CPU's
// mmap fails with EPERM, halve the size and start over so that every CPU
// gets the same buffer.
base::Result<Sampler::Impl::OpenedEvents> Sampler::Impl::open_buffers(
    pid_t pid, const EventChoice& event, const std::vector<int>& cpu_list) {
  OpenedEvents opened;
  opened.mmap_size =
      options.mmap_size != 0 ? options.mmap_size : default_mmap_size(options);
  const uint64_t min_size = std::min(opened.mmap_size, kMinMmapSize);
  opened.sample_attr = sampling_attr(options, event, opened.mmap_size);
  opened.track_attr = tracking_attr(options);
  for (size_t index = 0; index < cpu_list.size(); ++index) {
    const int cpu = cpu_list[index];
    CpuBuffer buffer;
    buffer.cpu = cpu;
    auto sampling_event = PerfEvent::open(opened.sample_attr, pid, cpu);
    if (!sampling_event)
      return open_error(std::move(sampling_event).error())
          .context("opening the " + event.name + " sampling event");
    buffer.sampling = std::move(*sampling_event);
    auto ring = RingBuffer::map(buffer.sampling.fd(), opened.mmap_size);
    if (!ring) {
      if (ring.error().code() != EPERM || opened.mmap_size / 2 < min_size)
        return mmap_error(std::move(ring).error(), cpu);
      opened.mmap_size /= 2;
      opened.shrunk = true;
      // The watermark is fixed at open: every event is reopened.
      opened.sample_attr = sampling_attr(options, event, opened.mmap_size);
      cpus.clear();
      opened.sample_ids.clear();
      opened.track_ids.clear();
      index = static_cast<size_t>(-1);  // ++ makes it 0
      continue;
    }
    buffer.ring = std::move(*ring);
    RUNNER_ASSIGN_OR_RETURN(uint64_t sample_id, buffer.sampling.id(),
                            "sampling event id");
    opened.sample_ids.push_back(sample_id);
    if (options.tracking_event) {
      auto st = open_tracking(opened.track_attr, pid, buffer, opened.track_ids);
      if (!st) return std::move(st).error();
    }
    cpus.push_back(std::move(buffer));
  }
  return opened;
}

// The always-on tracking event of one CPU, writing into the sampling
// event's ring buffer.
base::Status Sampler::Impl::open_tracking(const perf_event_attr& attr,
                                          pid_t pid, CpuBuffer& buffer,
                                          std::vector<uint64_t>& ids) {
  auto tracking = PerfEvent::open(attr, pid, buffer.cpu);
  if (!tracking)
    return open_error(std::move(tracking).error())
        .context("opening the tracking event");
  buffer.tracking = std::move(*tracking);
  RUNNER_RETURN_IF_ERROR(
      buffer.tracking.set_output(buffer.sampling),
      "sharing the ring buffer of cpu " + std::to_string(buffer.cpu));
  RUNNER_ASSIGN_OR_RETURN(uint64_t track_id, buffer.tracking.id(),
                          "tracking event id");
  ids.push_back(track_id);
  return {};
}

base::Error Sampler::Impl::mmap_error(base::Error error, int cpu) {
  if (error.code() == EPERM)
    error.context(
        "perf ring buffer does not fit the locked-memory "
        "limits (raise kernel.perf_event_mlock_kb or "
        "ulimit -l, or run with CAP_IPC_LOCK)");
  return std::move(error).context("cpu " + std::to_string(cpu));
}

void Sampler::Impl::record_buffer_stats(const EventChoice& event,
                                        const OpenedEvents& opened) {
  if (opened.shrunk) {
    RUNNER_LOG("profiler", kWarning)
        << "perf ring buffers shrunk to " << (opened.mmap_size >> 10)
        << " KiB per CPU by the locked-memory limits "
           "(kernel.perf_event_mlock_kb, ulimit -l); samples may be lost";
  }
  // Buffers opened before a shrink kept the larger size, which is fine: the
  // stats report the final (smallest) one.
  stats.event_name = event.name;
  stats.mmap_size_per_cpu = opened.mmap_size;
  stats.mmap_shrunk = opened.shrunk;
  stats.nr_cpus = cpus.size();
}

// perf.pipedata's beginning: pipe header, one attr per event, features.
base::Status Sampler::Impl::write_header(const std::string& output_path,
                                         const EventChoice& event,
                                         const OpenedEvents& opened) {
  RUNNER_ASSIGN_OR_RETURN(writer, PipedataWriter::create(output_path),
                          "creating the perf output");
  std::vector<EventDesc> events;
  events.push_back({opened.sample_attr, event.name, opened.sample_ids});
  if (options.tracking_event)
    events.push_back({opened.track_attr, kTrackingName, opened.track_ids});
  writer.write_pipe_header();
  for (const EventDesc& desc : events) writer.write_attr(desc.attr, desc.ids);
  write_features(writer, options, events);
  blanker = std::make_unique<StackBlanker>(opened.sample_attr);
  side_band = std::make_unique<SideBandLog>(events);
  if (options.compress_level != 0)
    RUNNER_RETURN_IF_ERROR(writer.enable_compression(options.compress_level),
                           "creating the perf output");
  writer.flush();
  if (writer.failed())
    return base::Error(writer.error(), writer.error_code())
        .context("writing the perf output header");
  return {};
}

// The drain thread sleeps in epoll on every ring buffer and on wake_fd.
base::Status Sampler::Impl::start_drain_thread() {
  epoll_fd.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_fd) return base::errno_error("epoll_create1");
  wake_fd.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd) return base::errno_error("eventfd");
  auto watch = [&](int fd) -> base::Status {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
      return base::errno_error("epoll_ctl");
    return {};
  };
  RUNNER_RETURN_IF_ERROR(watch(wake_fd.get()), "drain thread");
  for (const CpuBuffer& buffer : cpus)
    RUNNER_RETURN_IF_ERROR(watch(buffer.sampling.fd()), "drain thread");
  split_groups(drain_threads_for(options, cpus.size()));
  for (size_t g = 1; g < groups.size(); ++g) {
    DrainGroup& group = *groups[g];
    group.thread = std::thread([this, &group] { run_group(group); });
  }
  thread = std::thread([this] { run(); });
  return {};
}

Sampler::Sampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Sampler::~Sampler() {
  if (impl_ && !impl_->finished) (void)finish();
}

base::Status Sampler::enable() {
  {
    // Drain what the last window and the time since left, now, rather than
    // inside the window that starts.
    std::unique_lock<std::mutex> lock(impl_->mutex);
    const uint64_t passes = impl_->stats.drain_passes;
    impl_->wake();
    impl_->drained.wait_for(lock, kDrainBeforeEnable,
                            [&] { return impl_->stats.drain_passes > passes; });
  }
  impl_->sampling.store(true, std::memory_order_release);
  impl_->window_start_ns.store(now_ns(CLOCK_MONOTONIC),
                               std::memory_order_release);
  for (const Impl::CpuBuffer& buffer : impl_->cpus)
    RUNNER_RETURN_IF_ERROR(
        buffer.sampling.enable(),
        "enabling sampling on cpu " + std::to_string(buffer.cpu));
  return {};
}

base::Status Sampler::disable() {
  base::Status status;
  for (const Impl::CpuBuffer& buffer : impl_->cpus) {
    status = buffer.sampling.disable();
    if (!status) {
      status.error().context("disabling sampling on cpu " +
                             std::to_string(buffer.cpu));
      break;
    }
  }
  // Out of the window: drain now, and periodically again.
  impl_->sampling.store(false, std::memory_order_release);
  impl_->wake();
  return status;
}

base::Result<SamplerStats> Sampler::finish() {
  if (impl_->finished) return stats();
  impl_->finished = true;
  if (base::Status disabled = disable(); !disabled) {
    // The tasks may be gone; the final drain still runs.
    RUNNER_LOG("profiler", kWarning) << disabled.error().what();
  }
  impl_->stop.store(true, std::memory_order_release);
  impl_->wake();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->stop_groups();
  (void)impl_->writer.close();
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->record_writer_stats();
    impl_->stats.drain_cpu_ns = 0;
    for (const auto& group : impl_->groups)
      impl_->stats.drain_cpu_ns += group->cpu_ns;
  }
  if (impl_->stats.write_failed) {
    RUNNER_LOG("profiler", kWarning)
        << "perf output incomplete: " << impl_->stats.write_error << " ("
        << impl_->stats.bytes_dropped << " bytes dropped)";
  }
  // Unmap and close the events now rather than at destruction.
  impl_->cpus.clear();
  return stats();
}

SamplerStats Sampler::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

const std::string& Sampler::event_name() const { return impl_->event_name; }

format::perf::SideBandRecords Sampler::take_side_band() {
  if (!impl_->finished || !impl_->side_band) {
    format::perf::SideBandRecords none;
    none.incomplete = "the sampler did not finish";
    return none;
  }
  if (impl_->stats.write_failed)
    impl_->side_band->set_incomplete("perf.pipedata's writing failed");
  return impl_->side_band->take();
}

}  // namespace runner::profiler
