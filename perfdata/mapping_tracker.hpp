// MappingTracker: which ELF file is mapped where, per benchmark process.
// Replays the side-band records of a perf.pipedata (MMAP2, COMM exec,
// FORK/EXIT) in time order over a set of tracked pids, then backfills
// what perf missed from /proc/<pid>/maps snapshots (docs/formats.md,
// "Mappings").
//
// Ownership: the tracker owns the pinned fds taken over from snapshots;
// a TrackedMapping whose open_path is /proc/self/fd/N is readable only while
// the tracker lives.
//
// File identity: an MMAP2 record names maj:min:ino of the mapped file. The
// file now at that path is stat()ed; when its inode differs the mapping is
// not used silently: a pinned fd of the same file (same maj:min:ino in a
// snapshot's /proc/<pid>/maps, which prints the same numbers as MMAP2) is
// used instead, else it is dropped and counted as "replaced_on_disk" (a
// missing file: "missing_on_disk"). Against stat() only inodes are
// compared: the device perf records (the superblock's s_dev) and stat's
// st_dev legitimately differ on btrfs subvolumes and stacked filesystems
// (overlayfs), so a device mismatch alone is not a replacement. Records
// without an inode (the build-id MMAP2 variant) are only checked for
// existence.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "perfdata/pipedata_reader.hpp"
#include "perfdata/proc_maps.hpp"

namespace runner::perfdata {

enum class PidFilterMode {
  kTracked,  // announced pids and all their descendants (FORK)
  kAll,      // every pid in the file (exec-harness)
};

struct TrackedMapping {
  int32_t pid = 0;
  uint64_t start = 0, end = 0, pgoff = 0;
  std::string path;
  // Where to read the file now: `path`, or /proc/self/fd/N for a pinned
  // (deleted or replaced) file.
  std::string open_path;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  uint64_t timestamp = 0;  // record time / snapshot time (CLOCK_MONOTONIC)
  enum class Source { kMmap2, kProcSnapshot } source = Source::kMmap2;
};

struct TrackingStats {
  // reason -> count of MMAP2 records / snapshot mappings not used: "anon",
  // "memfd", "pseudo_path", "not_executable", "pid_filtered",
  // "deleted_unreadable", "replaced_on_disk", "missing_on_disk".
  // replaced/missing count MMAP2 records whose file was unusable when seen,
  // minus those a pinned fd later stood in for (see `pinned`).
  std::map<std::string, uint64_t> skipped;
  uint64_t mmap_records = 0, comm_exec = 0, forks = 0, exits = 0,
           backfilled = 0;
  uint64_t pinned = 0;         // mappings served through a pinned fd
  uint64_t replay_errors = 0;  // replay_file calls that hit a broken stream
  // Exited processes without a sample, not announced, forgotten beyond
  // set_unsampled_exited_limit.
  uint64_t unsampled_forgotten = 0;
};

class MappingTracker {
 public:
  MappingTracker(PidFilterMode mode, std::vector<int32_t> announced_pids);

  // Reads the side-band records (MMAP/MMAP2/COMM/FORK/EXIT) of the file and
  // the pid and time of its samples, orders them by time (stable) and
  // applies them. Memory is bounded by two rounds of records, not by the
  // file: at each FINISHED_ROUND the records up to the newest time of the
  // round before are applied (a later round holds only newer records, as
  // perf assumes); a file without rounds is ordered as a whole. A
  // truncated/corrupt file: everything read before the break is still
  // applied, the Error is returned (and counted in stats().replay_errors);
  // the tracker state stays usable.
  base::Status replay_file(const std::string& pipedata_path);
  // The same from the side-band records the profiler kept while it wrote
  // the file (format::perf::SideBandRecords, usable()): the same mappings,
  // tracked pids and stats as replay_file on that file, at the cost of the
  // side-band records rather than of the whole file.
  base::Status replay_records(const format::perf::SideBandRecords& records);
  // One record, in time order: side-band records change the mappings, a
  // sample marks its pid as sampled; other kinds are ignored.
  void apply(const Record& record);
  // A process that exited without a sample and was not announced has
  // nothing to symbolize: keep the mappings of at most `limit` such
  // processes (the most recent exits) and forget the older ones, so that
  // memory follows the live processes, not every process the benchmark ever
  // forked. Default: no limit (mappings always stay after an exit).
  void set_unsampled_exited_limit(size_t limit) { unsampled_limit_ = limit; }
  // After replay: adds every snapshot mapping of a tracked pid whose range
  // no usable mapping of that pid overlaps yet (perf's MMAP2 wins), and lets
  // pinned files stand in for
  // MMAP2 mappings whose file was replaced on disk. Takes ownership of the
  // pinned fds that end up used.
  void backfill(std::vector<ProcSnapshot> snapshots);
  // Keeps "[vdso]" mappings (otherwise skipped as a pseudo path), read from
  // `image_path`: a copy of the vDSO, which is the same image in every
  // process of a kernel. Call before replay.
  void set_vdso_image(std::string image_path) {
    vdso_image_ = std::move(image_path);
  }

  // Final state for the tracked pids, sorted by (pid, start): every exec
  // mapping in force at the end (a file mapped several times, as node maps
  // itself, has several; one that a later mmap covered is cut or gone).
  // (Untracked pids are followed internally so that
  // a tracked fork of one inherits its mappings, but never reported.)
  std::vector<TrackedMapping> mappings() const;
  // kTracked: announced pids + descendants. kAll: announced pids + every
  // pid that has a mapping.
  std::set<int32_t> tracked_pids() const;
  const TrackingStats& stats() const { return stats_; }

 private:
  enum class FileState { kOk, kReplaced, kMissing };
  struct Entry {
    TrackedMapping mapping;
    FileState state = FileState::kOk;
    bool counted = false;  // this entry's record is counted in `skipped`
  };
  struct FileId {
    bool exists = false;
    uint64_t inode = 0;
  };

  struct PinIndex;
  // One process's executable mappings, by start address; never overlapping.
  using AddressSpace = std::map<uint64_t, Entry>;

  static void place(AddressSpace& space, Entry e);
  static bool overlaps(const AddressSpace& space, uint64_t start, uint64_t end,
                       bool usable_only = false);

  bool pid_passes(int32_t pid) const;
  // The steps of backfill().
  void repin_unusable_mmaps(PinIndex& pins);
  void backfill_snapshot(ProcSnapshot& snap, PinIndex& pins);
  bool readable_snapshot_file(ProcSnapshot& snap, const ProcMapping& m,
                              const PinIndex& pins, PinnedFile** pin);
  static TrackedMapping snapshot_mapping(const ProcSnapshot& snap,
                                         const ProcMapping& m);
  void apply_mmap(const Mmap2Record& m);
  void apply_fork(const TaskRecord& t);
  void apply_exit(const TaskRecord& t);
  void retire(int32_t pid);
  FileState check_file(const std::string& path, uint64_t inode);
  static const char* reason_for(FileState state);

  PidFilterMode mode_;
  std::set<int32_t> announced_;
  std::set<int32_t> tracked_;
  std::set<int32_t> exited_;
  std::map<int32_t, AddressSpace> by_pid_;
  std::map<std::string, FileId> stat_cache_;
  std::string vdso_image_;
  std::vector<PinnedFile> pinned_;
  TrackingStats stats_;
  size_t unsampled_limit_ = SIZE_MAX;
  std::set<int32_t> sampled_;
  // Exited processes without a sample, oldest first: (pid, exit number);
  // an entry is stale when retired_ holds another number for the pid (a
  // sample or a new process of that pid came since).
  std::deque<std::pair<int32_t, uint64_t>> retired_order_;
  std::map<int32_t, uint64_t> retired_;
  uint64_t retire_count_ = 0;
  // Live threads other than the leader, per process (FORK/EXIT of
  // threads), and processes whose leader exited before them: a process is
  // gone when both are done.
  std::map<int32_t, uint32_t> threads_;
  std::set<int32_t> leader_exited_;
};

// Why a mapped path is not an ELF file worth tracking ("anon", "memfd",
// "pseudo_path"), or nullptr for a regular path. Shared by MMAP2 records and
// /proc snapshots so both sources skip the same things.
const char* skip_reason_for_path(const std::string& path);

}  // namespace runner::perfdata
