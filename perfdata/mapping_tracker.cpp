#include "perfdata/mapping_tracker.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace runner::perfdata {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Time a side-band record happened at; FORK/EXIT carry their own.
uint64_t record_time(const Record& r) {
  switch (r.kind) {
    case RecordKind::kSample:
      return r.sample.time;
    case RecordKind::kMmap2:
      return r.mmap.sample_id.time;
    case RecordKind::kComm:
      return r.comm.sample_id.time;
    case RecordKind::kTask:
      return r.task.time;
    default:
      return 0;
  }
}

bool is_side_band(const Record& r) {
  return r.kind == RecordKind::kMmap2 || r.kind == RecordKind::kComm ||
         r.kind == RecordKind::kTask;
}

// A sample reduced to what the tracker needs (its pid and time): no call
// chain, registers or stack copy is kept.
Record sample_marker(uint32_t pid, uint32_t tid, uint64_t time) {
  Record r;
  r.kind = RecordKind::kSample;
  r.sample.pid = pid;
  r.sample.tid = tid;
  r.sample.time = time;
  return r;
}

}  // namespace

const char* skip_reason_for_path(const std::string& path) {
  if (path.empty() || path == "//anon" || starts_with(path, "anon_inode:") ||
      starts_with(path, "/anon_hugepage") || starts_with(path, "/SYSV"))
    return "anon";
  if (starts_with(path, "/memfd:")) return "memfd";
  if (path.front() != '/' || starts_with(path, "//")) return "pseudo_path";
  return nullptr;
}

// Whether an entry of `space` overlaps [start, end) (only usable ones:
// whose file could be read).
bool MappingTracker::overlaps(const AddressSpace& space, uint64_t start,
                              uint64_t end, bool usable_only) {
  auto it = space.lower_bound(start);
  if (it != space.begin()) --it;
  for (; it != space.end() && it->second.mapping.start < end; ++it)
    if (it->second.mapping.end > start &&
        (!usable_only || it->second.state == FileState::kOk))
      return true;
  return false;
}

MappingTracker::MappingTracker(PidFilterMode mode,
                               std::vector<int32_t> announced_pids)
    : mode_(mode),
      announced_(announced_pids.begin(), announced_pids.end()),
      tracked_(announced_) {}

bool MappingTracker::pid_passes(int32_t pid) const {
  return mode_ == PidFilterMode::kAll || tracked_.count(pid) != 0;
}

const char* MappingTracker::reason_for(FileState state) {
  return state == FileState::kReplaced ? "replaced_on_disk" : "missing_on_disk";
}

MappingTracker::FileState MappingTracker::check_file(const std::string& path,
                                                     uint64_t inode) {
  auto it = stat_cache_.find(path);
  if (it == stat_cache_.end()) {
    struct stat st {};
    FileId id;
    if (::stat(path.c_str(), &st) == 0) {
      id.exists = true;
      id.inode = st.st_ino;
    }
    it = stat_cache_.emplace(path, id).first;
  }
  if (!it->second.exists) return FileState::kMissing;
  if (inode != 0 && it->second.inode != inode) return FileState::kReplaced;
  return FileState::kOk;
}

void MappingTracker::apply_mmap(const Mmap2Record& m) {
  ++stats_.mmap_records;
  auto pid = static_cast<int32_t>(m.pid);
  // Untracked pids are still followed (but not reported): a pid announced
  // later may be a fork of one of them and inherit its address space.
  if (!pid_passes(pid)) ++stats_.skipped["pid_filtered"];
  if ((m.prot & PROT_EXEC) == 0) {
    ++stats_.skipped["not_executable"];
    return;
  }
  const bool vdso = !vdso_image_.empty() && m.filename == "[vdso]";
  if (const char* reason = skip_reason_for_path(m.filename); reason && !vdso) {
    ++stats_.skipped[reason];
    return;
  }
  Entry e;
  TrackedMapping& t = e.mapping;
  t.pid = pid;
  t.start = m.addr;
  t.end = m.addr + m.len;
  t.pgoff = m.pgoff;
  t.path = m.filename;
  t.open_path = vdso ? vdso_image_ : m.filename;
  t.dev_major = m.maj;
  t.dev_minor = m.min;
  t.inode = m.ino;
  t.timestamp = m.sample_id.time;
  t.source = TrackedMapping::Source::kMmap2;
  e.state = vdso ? FileState::kOk
                 : check_file(m.filename, m.has_build_id ? 0 : m.ino);
  if (e.state != FileState::kOk) {
    ++stats_.skipped[reason_for(e.state)];
    e.counted = true;
  }
  // Every executable mapping is kept (a file may be mapped several times,
  // each with its own load bias: V8 remaps node's embedded builtins); a new
  // mapping replaces whatever it overlaps, as the kernel's mmap does.
  place(by_pid_[pid], std::move(e));
}

// Puts `e` into `space`, cutting what it overlaps out of older entries (the
// parts outside it stay, with their file offsets moved along).
void MappingTracker::place(AddressSpace& space, Entry e) {
  const uint64_t start = e.mapping.start, end = e.mapping.end;
  auto it = space.lower_bound(start);
  if (it != space.begin() && std::prev(it)->second.mapping.end > start) --it;
  while (it != space.end() && it->second.mapping.start < end) {
    Entry old = std::move(it->second);
    it = space.erase(it);
    if (old.mapping.start < start) {
      Entry head = old;
      head.mapping.end = start;
      space.emplace(head.mapping.start, std::move(head));
    }
    if (old.mapping.end > end) {
      Entry tail = std::move(old);
      tail.mapping.pgoff += end - tail.mapping.start;
      tail.mapping.start = end;
      it = space.emplace(end, std::move(tail)).first;
      ++it;
    }
  }
  space.emplace(start, std::move(e));
}

void MappingTracker::apply_fork(const TaskRecord& t) {
  ++stats_.forks;
  auto pid = static_cast<int32_t>(t.pid);
  auto ppid = static_cast<int32_t>(t.ppid);
  if (pid == ppid) {  // a new thread: same address space
    if (t.tid != t.pid) ++threads_[pid];
    return;
  }
  // A reused pid starts with no threads of the dead process.
  threads_.erase(pid);
  leader_exited_.erase(pid);
  sampled_.erase(pid);
  retired_.erase(pid);
  if (pid_passes(ppid)) tracked_.insert(pid);
  // A reused pid: what the dead process mapped is not this one's.
  if (exited_.erase(pid) != 0) by_pid_.erase(pid);
  auto parent = by_pid_.find(ppid);
  if (parent == by_pid_.end()) return;
  // The child starts with its parent's address space; an entry it already
  // has (records of one time stamp, or reordered across CPUs) is its own
  // and wins.
  AddressSpace inherited = parent->second;
  auto& child = by_pid_[pid];
  for (auto& [start, entry] : inherited) {
    if (overlaps(child, entry.mapping.start, entry.mapping.end)) continue;
    entry.mapping.pid = pid;
    entry.counted = false;
    child.emplace(start, std::move(entry));
  }
}

void MappingTracker::apply_exit(const TaskRecord& t) {
  // Mappings stay: samples taken before the exit still need them.
  ++stats_.exits;
  auto pid = static_cast<int32_t>(t.pid);
  if (t.pid != t.tid) {
    auto it = threads_.find(pid);
    if (it == threads_.end()) return;
    if (--it->second == 0) {
      threads_.erase(it);
      if (leader_exited_.erase(pid) != 0) retire(pid);
    }
    return;
  }
  exited_.insert(pid);
  if (threads_.count(pid) != 0) {
    leader_exited_.insert(pid);  // gone when its last thread exits
    return;
  }
  retire(pid);
}

void MappingTracker::retire(int32_t pid) {
  if (unsampled_limit_ == SIZE_MAX || sampled_.count(pid) != 0 ||
      announced_.count(pid) != 0)
    return;
  retired_[pid] = ++retire_count_;
  retired_order_.emplace_back(pid, retire_count_);
  while (retired_order_.size() > unsampled_limit_) {
    auto [old, number] = retired_order_.front();
    retired_order_.pop_front();
    auto it = retired_.find(old);
    if (it == retired_.end() || it->second != number) continue;  // stale
    retired_.erase(it);
    // A process that is gone cannot fork any more: nothing of it is needed.
    by_pid_.erase(old);
    tracked_.erase(old);
    exited_.erase(old);
    ++stats_.unsampled_forgotten;
  }
}

void MappingTracker::apply(const Record& record) {
  switch (record.kind) {
    case RecordKind::kSample: {
      auto pid = static_cast<int32_t>(record.sample.pid);
      sampled_.insert(pid);
      retired_.erase(pid);
      break;
    }
    case RecordKind::kMmap2:
      apply_mmap(record.mmap);
      break;
    case RecordKind::kComm: {
      // An exec replaces the address space; only the thread-group leader's
      // COMM (pid == tid) marks it (a renamed thread is not an exec).
      const CommRecord& c = record.comm;
      auto pid = static_cast<int32_t>(c.pid);
      if (c.exec && c.pid == c.tid) {
        if (pid_passes(pid)) ++stats_.comm_exec;
        by_pid_.erase(pid);
      }
      break;
    }
    case RecordKind::kTask:
      if (record.task.is_exit) {
        apply_exit(record.task);
      } else {
        apply_fork(record.task);
      }
      break;
    default:
      break;
  }
}

namespace {

// The replay of one stream: records are applied in time order within the
// rounds (see replay_file), or in stream order when they have no time.
class Replay {
 public:
  Replay(MappingTracker& tracker, PipedataReader& reader,
         const format::perf::SideBandRecords* side_band)
      : tracker_(tracker), reader_(reader), side_band_(side_band) {}

  base::Status run() {
    base::Status status;
    Record record;
    while (true) {
      auto more = reader_.next_into(record, /*copy_stack=*/false);
      if (!more) {
        status = std::move(more).error();
        break;
      }
      if (!*more) break;
      if (side_band_ != nullptr) take_samples_before(reader_.record_offset());
      take(record);
    }
    if (side_band_ != nullptr) take_samples_before(UINT64_MAX);
    flush(UINT64_MAX);
    return status;
  }

 private:
  void take(Record& record) {
    if (!checked_attrs_ && record.kind != RecordKind::kAttr &&
        record.kind != RecordKind::kFeature)
      check_attrs();
    if (record.kind == RecordKind::kFinishedRound) {
      if (side_band_ != nullptr) newest_ = std::max(newest_, round_newest());
      if (timed_) {
        flush(applied_up_to_);
        applied_up_to_ = newest_;
      }
      return;
    }
    if (record.kind == RecordKind::kSample) {
      push(sample_marker(record.sample.pid, record.sample.tid,
                         record.sample.time));
    } else if (is_side_band(record)) {
      push(std::move(record));
      record = Record{};
    }
  }

  // perf writes each CPU's buffer in turn, so records are only ordered
  // within a round; sort by time when every record has one (attrs with
  // sample_id_all + TIME), else the file order is the best there is.
  void check_attrs() {
    checked_attrs_ = true;
    timed_ = !reader_.attrs().empty();
    for (const EventAttr& a : reader_.attrs())
      if (!a.attr.sample_id_all || !(a.attr.sample_type & PERF_SAMPLE_TIME))
        timed_ = false;
  }

  void push(Record record) {
    if (!timed_) {
      tracker_.apply(record);  // file order
      return;
    }
    newest_ = std::max(newest_, record_time(record));
    pending_.push_back(std::move(record));
  }

  // The side-band records' samples that came before the stream's record at
  // `offset`.
  void take_samples_before(uint64_t offset) {
    const auto& samples = side_band_->samples;
    for (; next_sample_ < samples.size() && samples[next_sample_].at <= offset;
         ++next_sample_) {
      const auto& s = samples[next_sample_];
      if (!checked_attrs_) check_attrs();
      push(sample_marker(s.pid, s.tid, s.time));
    }
  }

  // The newest sample time up to the round marker just read, the samples
  // the side-band records left out included.
  uint64_t round_newest() {
    const auto& rounds = side_band_->rounds;
    const uint64_t at = reader_.record_offset();
    while (next_round_ < rounds.size() && rounds[next_round_].at < at)
      ++next_round_;
    if (next_round_ < rounds.size() && rounds[next_round_].at == at)
      return rounds[next_round_].newest_sample;
    return 0;
  }

  // Applies the pending records up to `limit` in time order and keeps the
  // rest (stable: records of one time keep their file order).
  void flush(uint64_t limit) {
    auto by_time = [](const Record& a, const Record& b) {
      return record_time(a) < record_time(b);
    };
    std::stable_sort(pending_.begin(), pending_.end(), by_time);
    auto end = std::upper_bound(
        pending_.begin(), pending_.end(), limit,
        [](uint64_t t, const Record& r) { return t < record_time(r); });
    for (auto it = pending_.begin(); it != end; ++it) tracker_.apply(*it);
    pending_.erase(pending_.begin(), end);
  }

  MappingTracker& tracker_;
  PipedataReader& reader_;
  const format::perf::SideBandRecords* side_band_;
  // Records read but not applied yet; `applied_up_to_` is the newest time
  // of the records read before the last round marker.
  std::vector<Record> pending_;
  uint64_t newest_ = 0, applied_up_to_ = 0;
  bool timed_ = false, checked_attrs_ = false;
  size_t next_sample_ = 0, next_round_ = 0;
};

}  // namespace

base::Status MappingTracker::replay_file(const std::string& pipedata_path) {
  auto reader = PipedataReader::open(pipedata_path);
  if (!reader) {
    ++stats_.replay_errors;
    return std::move(reader).error();
  }
  base::Status status = Replay(*this, *reader, nullptr).run();
  if (!status) ++stats_.replay_errors;
  return status;
}

base::Status MappingTracker::replay_records(
    const format::perf::SideBandRecords& records) {
  auto reader =
      PipedataReader::open_memory(records.stream, "side-band records");
  if (!reader) {
    ++stats_.replay_errors;
    return std::move(reader).error();
  }
  base::Status status = Replay(*this, *reader, &records).run();
  if (!status) ++stats_.replay_errors;
  return status;
}

// Every pinned fd of the snapshots, by the file it holds open as
// /proc/<pid>/maps named it: maps and MMAP2 both print the superblock's dev
// and the inode, so the keys compare across the two sources (stat's st_dev
// would not always). Remembers which pins were used.
struct MappingTracker::PinIndex {
  using FileKey = std::tuple<uint32_t, uint32_t, uint64_t>;
  std::map<FileKey, PinnedFile*> by_file;
  std::vector<PinnedFile*> used;

  explicit PinIndex(std::vector<ProcSnapshot>& snapshots) {
    for (ProcSnapshot& snap : snapshots)
      for (PinnedFile& p : snap.pinned) {
        if (!p.fd) continue;
        for (const ProcMapping& m : snap.mappings)
          if (m.start == p.start && m.end == p.end)
            by_file.emplace(FileKey{m.dev_major, m.dev_minor, m.inode}, &p);
      }
  }
  PinnedFile* find(uint32_t dev_major, uint32_t dev_minor,
                   uint64_t inode) const {
    auto it = by_file.find(FileKey{dev_major, dev_minor, inode});
    return it == by_file.end() ? nullptr : it->second;
  }
  // The path that reads the pinned file; the pin is kept by the tracker.
  std::string use(PinnedFile* p) {
    if (std::find(used.begin(), used.end(), p) == used.end()) used.push_back(p);
    return fd_path(p->fd.get());
  }
};

void MappingTracker::backfill(std::vector<ProcSnapshot> snapshots) {
  PinIndex pins(snapshots);
  repin_unusable_mmaps(pins);
  for (ProcSnapshot& snap : snapshots) backfill_snapshot(snap, pins);
  for (PinnedFile* p : pins.used) pinned_.push_back(std::move(*p));
}

// MMAP2 mappings whose file is gone: the same inode pinned by a snapshot
// has the bytes that were mapped.
void MappingTracker::repin_unusable_mmaps(PinIndex& pins) {
  for (auto& [pid, paths] : by_pid_) {
    if (!pid_passes(pid)) continue;
    for (auto& [start, e] : paths) {
      if (e.state == FileState::kOk || e.mapping.inode == 0) continue;
      PinnedFile* pin =
          pins.find(e.mapping.dev_major, e.mapping.dev_minor, e.mapping.inode);
      if (pin == nullptr) continue;
      if (e.counted) {
        auto& count = stats_.skipped[reason_for(e.state)];
        if (count > 0) --count;
        e.counted = false;
      }
      e.state = FileState::kOk;
      e.mapping.open_path = pins.use(pin);
      ++stats_.pinned;
    }
  }
}

// The mappings of one snapshot that perf's MMAP2 records did not give.
void MappingTracker::backfill_snapshot(ProcSnapshot& snap, PinIndex& pins) {
  if (snap.deleted_unreadable > 0)
    stats_.skipped["deleted_unreadable"] += snap.deleted_unreadable;
  if (!pid_passes(snap.pid)) {
    stats_.skipped["pid_filtered"] += snap.mappings.size();
    return;
  }
  auto& paths = by_pid_[snap.pid];
  for (const ProcMapping& m : snap.mappings) {
    if (const char* reason = skip_reason_for_path(m.path)) {
      ++stats_.skipped[reason];
      continue;
    }
    // perf's MMAP2 wins, unless its file turned out unusable.
    if (overlaps(paths, m.start, m.end, /*usable_only=*/true)) continue;
    PinnedFile* pin = nullptr;
    if (!readable_snapshot_file(snap, m, pins, &pin)) continue;
    Entry e;
    e.mapping = snapshot_mapping(snap, m);
    if (pin != nullptr) {
      e.mapping.open_path = pins.use(pin);
      ++stats_.pinned;
    }
    place(paths, std::move(e));
    ++stats_.backfilled;
  }
  if (paths.empty()) by_pid_.erase(snap.pid);
}

// Whether the file of a snapshot mapping can be read: at its path (same
// inode), else through a pin (*pin). Counts why not.
bool MappingTracker::readable_snapshot_file(ProcSnapshot& snap,
                                            const ProcMapping& m,
                                            const PinIndex& pins,
                                            PinnedFile** pin) {
  if (m.deleted) {
    for (PinnedFile& p : snap.pinned)
      if (p.start == m.start && p.end == m.end && p.fd) *pin = &p;
    if (*pin == nullptr) ++stats_.skipped["deleted_unreadable"];
    return *pin != nullptr;
  }
  FileState state = check_file(m.path, m.inode);
  if (state == FileState::kOk) return true;
  *pin = pins.find(m.dev_major, m.dev_minor, m.inode);
  if (*pin == nullptr) ++stats_.skipped[reason_for(state)];
  return *pin != nullptr;
}

TrackedMapping MappingTracker::snapshot_mapping(const ProcSnapshot& snap,
                                                const ProcMapping& m) {
  TrackedMapping t;
  t.pid = snap.pid;
  t.start = m.start;
  t.end = m.end;
  t.pgoff = m.offset;
  t.path = m.path;
  t.open_path = m.path;
  t.dev_major = m.dev_major;
  t.dev_minor = m.dev_minor;
  t.inode = m.inode;
  t.timestamp = snap.timestamp;
  t.source = TrackedMapping::Source::kProcSnapshot;
  return t;
}

std::vector<TrackedMapping> MappingTracker::mappings() const {
  std::vector<TrackedMapping> out;
  for (const auto& [pid, paths] : by_pid_) {
    if (!pid_passes(pid)) continue;
    for (const auto& [start, e] : paths)
      if (e.state == FileState::kOk) out.push_back(e.mapping);
  }
  std::sort(out.begin(), out.end(),
            [](const TrackedMapping& a, const TrackedMapping& b) {
              return a.pid != b.pid ? a.pid < b.pid : a.start < b.start;
            });
  return out;
}

std::set<int32_t> MappingTracker::tracked_pids() const {
  if (mode_ == PidFilterMode::kTracked) return tracked_;
  std::set<int32_t> out = announced_;
  for (const auto& [pid, paths] : by_pid_)
    for (const auto& [start, e] : paths)
      if (e.state == FileState::kOk) {
        out.insert(pid);
        break;
      }
  return out;
}

}  // namespace runner::perfdata
