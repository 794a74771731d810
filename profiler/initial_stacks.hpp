// InitialStacks: where each sampled process's initial stack area begins, by
// pid and by time, for blanking it out of the samples' stack copies.
//
// The initial stack area of a process (argc, the argv and envp pointers,
// the auxiliary vector, the AT_RANDOM bytes, the argv and environment
// strings, the exec'd file name) lies at and above the `start_stack` of
// /proc/<pid>/stat; every frame of the program lies below it. An exec gives
// the process a new area; a fork gives the child a copy of its parent's;
// threads share their process's. So a process's history is a list of
// generations (from an exec or a fork, or from when it was first seen),
// each with the start of its area once learned, and a sample uses the
// generation of its pid that was current at its time.
//
// Records of several CPUs arrive out of order: a sample taken after an
// exec can be read before the exec's COMM record. The drain pass therefore
// learns in this order: it notes the side-band records (COMM with
// PERF_RECORD_MISC_COMM_EXEC, FORK, EXIT, LOST) and the samples of every
// buffer up to the heads it will write (want()), reads /proc for the
// processes whose generation is unknown (learn()), notes the side-band
// records that arrived meanwhile (those up to heads taken after the reads),
// and only then assigns what it read (resolve()): a value read at time T
// belongs to the generation current at T, and every generation begun
// before T is known by then, since a process cannot run the new program
// before its exec's COMM record is out. Whatever cannot be learned (the
// process is gone, /proc is unreadable, start_stack is hidden as 0) stays
// unknown: the caller then blanks the whole copy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace runner::profiler {

class InitialStacks {
 public:
  // Where the initial stack area of the process `pid` begins, as /proc
  // shows it now through its thread `tid`; nullopt when it cannot be
  // learned.
  using Lookup = std::function<std::optional<uint64_t>(pid_t pid, pid_t tid)>;
  // CLOCK_MONOTONIC in ns, the clock of the samples' times.
  using Clock = std::function<uint64_t()>;

  // Reads /proc/<pid>/task/<tid>/stat (a thread's view of its process
  // still works after the main thread has exited), else /proc/<pid>/stat.
  static std::optional<uint64_t> read_proc(pid_t pid, pid_t tid);
  static uint64_t monotonic_ns();

  // At most this many processes are followed at once; the samples of the
  // others have their stack copies blanked (counted by the caller).
  static constexpr size_t kMaxProcesses = 1 << 16;
  // Generations kept per process (older ones are forgotten first).
  static constexpr size_t kMaxGenerations = 16;

  explicit InitialStacks(Lookup lookup = read_proc, Clock clock = monotonic_ns);

  // A drain pass begins: forgets the processes that exited two passes ago
  // (their last samples have been written since).
  void begin_pass();

  // Side-band records.
  void note_exec(pid_t pid, uint64_t time);
  void note_fork(pid_t pid, pid_t ppid, uint64_t time);
  void note_exit(pid_t pid, pid_t tid, uint64_t time);
  // From `time` on, side-band records may have been lost: every process
  // starts a generation whose area is unknown until read again.
  void barrier(uint64_t time);

  // A sample of `pid` (thread `tid`) at `time`: when its generation's area
  // is unknown, the process is read by the next learn().
  void want(pid_t pid, pid_t tid, uint64_t time);
  // Reads what want() asked for (once per process and pass).
  void learn();
  // Assigns what learn() read to the generations it belongs to. Call after
  // noting every side-band record published before learn() returned.
  void resolve();

  // The start of the area for a sample of `pid` at `time`.
  std::optional<uint64_t> start_at(pid_t pid, uint64_t time) const;

  size_t processes() const { return processes_.size(); }
  uint64_t lookups() const { return lookups_; }  // /proc reads so far

 private:
  struct Generation {
    uint64_t time = 0;
    uint64_t start = 0;  // 0: unknown
    pid_t parent = 0;    // a fork's parent, while its area is unknown
  };
  struct Process {
    std::vector<Generation> generations;  // by time
    std::optional<uint64_t> exit_time;
    uint64_t exit_pass = 0;
  };
  struct Read {
    pid_t pid = 0;
    uint64_t before = 0, after = 0;  // the clock around the read
    std::optional<uint64_t> start;
  };

  // The process of `pid`, created (with one generation of unknown area
  // from the beginning of time) when it is new and there is room.
  Process* process(pid_t pid);
  // The generation beginning exactly at `time`, added when missing
  // (nullptr when it would be older than every generation kept).
  Generation* generation_at(Process& p, uint64_t time);
  // The generation current at `time` (nullptr: before every one kept).
  static Generation* current(Process& p, uint64_t time);
  static const Generation* current(const Process& p, uint64_t time);
  // Takes a fork's area from its parent; false while it is unknown.
  bool inherit(Generation& g) const;

  Lookup lookup_;
  Clock clock_;
  std::unordered_map<pid_t, Process> processes_;
  std::unordered_map<pid_t, pid_t> wanted_;  // pid -> a thread of it
  std::unordered_set<pid_t> read_this_pass_;
  std::vector<Read> reads_;
  // Forks whose parent's area was unknown when they were noted, tried
  // again by resolve() for two passes (after that the child's own /proc
  // entry is read when one of its samples needs it).
  struct PendingFork {
    pid_t pid = 0;
    uint64_t time = 0, pass = 0;
  };
  std::vector<PendingFork> pending_forks_;
  uint64_t pass_ = 0;
  uint64_t lookups_ = 0;
};

}  // namespace runner::profiler
