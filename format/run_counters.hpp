// runner.counters.json: the benchmark's counting perf events (task-clock
// always; instructions and cycles where a hardware PMU exists), read by the
// runner at the start and stop of every benchmark window (StartBenchmark /
// StopBenchmark) on the benchmark's process tree (docs/formats.md,
// "runner.counters.json"). A runner-owned file: CodSpeed's files are not
// changed by it. Versioned JSON, written and read here only:
//
//   {"version": 1, "clock": "CLOCK_MONOTONIC",
//    "counters": [{"name": "task-clock", "counted": true,
//                  "user_only": false},
//                 {"name": "instructions", "counted": false,
//                  "absent_reason": "..."}, ...],
//    "windows": [{"start_ns": ..., "stop_ns": ...,
//                 "task-clock": {"value": ..., "enabled_ns": ...,
//                                "running_ns": ..., "multiplexed": false},
//                 "instructions": {...}}, ...],
//    "lost_windows": 0, "lost_reason": ""}
//
// A window's counts are deltas between the two reads (task-clock in ns of
// CPU time, user + kernel unless "user_only"); start_ns/stop_ns are the
// CLOCK_MONOTONIC times of those reads, the clock of
// ExecutionTimestamps.msgpack. "multiplexed" says running_ns < enabled_ns:
// the kernel counted the event only part of the window; the value is the
// raw count, never scaled. Windows whose counters could not be read are not
// listed but counted in lost_windows (the first error in lost_reason).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

inline constexpr int kRunCountersVersion = 1;
// Far above any real run (a window is ~200 bytes: 300k windows); readers
// refuse larger files.
inline constexpr uint64_t kMaxRunCountersBytes = uint64_t{64} << 20;

inline constexpr std::string_view kTaskClockCounter = "task-clock";
inline constexpr std::string_view kInstructionsCounter = "instructions";
inline constexpr std::string_view kCyclesCounter = "cycles";

// One counter over one window.
struct CounterDelta {
  uint64_t value = 0;
  uint64_t enabled_ns = 0, running_ns = 0;
  bool multiplexed() const { return running_ns < enabled_ns; }
  bool operator==(const CounterDelta&) const = default;
};

struct CounterWindow {
  uint64_t start_ns = 0, stop_ns = 0;  // CLOCK_MONOTONIC, start <= stop
  std::optional<CounterDelta> task_clock, instructions, cycles;
  bool operator==(const CounterWindow&) const = default;
};

// What the runner tried to count: opened (counted) or not, and why not.
struct CounterInfo {
  std::string name;  // kTaskClockCounter, kInstructionsCounter, kCyclesCounter
  bool counted = false;
  bool user_only = false;     // exclude_kernel: user-space counts only
  std::string absent_reason;  // when not counted
  bool operator==(const CounterInfo&) const = default;
};

struct RunCounters {
  int version = kRunCountersVersion;
  std::vector<CounterInfo> counters;
  std::vector<CounterWindow> windows;  // in the order they closed
  uint64_t lost_windows = 0;
  std::string lost_reason;
  bool operator==(const RunCounters&) const = default;
};

// Pretty-printed (2 spaces, trailing newline), members in the order above.
std::string write_run_counters(const RunCounters& counters);

// Every error starts with "runner.counters.json: " and names what is wrong:
// "over the 64 MiB limit", "not JSON (...)", "version 3 is not supported
// (this runner reads 1)", "missing 'windows'", "windows[2].start_ns is not
// an integer >= 0", "windows[2]: stop_ns before start_ns", ... Unknown
// members are ignored (a later version 1 writer may add some).
base::Result<RunCounters> read_run_counters(std::string_view text);

}  // namespace runner::format
