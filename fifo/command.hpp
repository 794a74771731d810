// Commands of the runner FIFO protocol (CodSpeed-compatible). The variant
// order of `Command` IS the wire tag (bincode encodes enum variants by their
// declaration index), so never reorder it.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace runner::fifo {

// Same numbers as the C API's MARKER_TYPE_* constants and the wire tags.
enum class MarkerType : uint32_t {
  kSampleStart = 0,
  kSampleEnd = 1,
  kRoundStart = 2,  // "BenchmarkStart" in older clients
  kRoundEnd = 3,    // "BenchmarkEnd" in older clients
};

// A marker carries a CLOCK_MONOTONIC timestamp in nanoseconds.
struct Marker {
  MarkerType type = MarkerType::kSampleStart;
  uint64_t timestamp = 0;
  bool operator==(const Marker&) const = default;
};

const char* marker_name(MarkerType type);

enum class IntegrationMode : uint32_t {
  kWalltime = 0,  // "Perf" before May 2026
  kSimulation = 1,
  kAnalysis = 2,
};

const char* integration_mode_name(IntegrationMode mode);

// Tag 0: the benchmark that just ran (sent after its StopBenchmark).
struct CurrentBenchmark {
  int32_t pid = 0;
  std::string uri;
  bool operator==(const CurrentBenchmark&) const = default;
};
// Tag 1 (runner name StartProfiler).
struct StartBenchmark {
  bool operator==(const StartBenchmark&) const = default;
};
// Tag 2 (runner name StopProfiler).
struct StopBenchmark {
  bool operator==(const StopBenchmark&) const = default;
};
// Tag 3: runner -> client.
struct Ack {
  bool operator==(const Ack&) const = default;
};
// Tag 4 (deprecated liveness probe, runner name PingProfiler).
struct PingPerf {
  bool operator==(const PingPerf&) const = default;
};
// Tag 5.
struct SetIntegration {
  std::string name;
  std::string version;
  bool operator==(const SetIntegration&) const = default;
};
// Tag 6: runner -> client.
struct Err {
  bool operator==(const Err&) const = default;
};
// Tag 7: the runner ignores the pid and keeps markers in arrival order.
struct AddMarker {
  int32_t pid = 0;
  Marker marker;
  bool operator==(const AddMarker&) const = default;
};
// Tag 8: protocol version of the client (1 or 2 are supported).
struct SetVersion {
  uint64_t version = 0;
  bool operator==(const SetVersion&) const = default;
};
// Tag 9.
struct GetIntegrationMode {
  bool operator==(const GetIntegrationMode&) const = default;
};
// Tag 10: runner -> client, answer to GetIntegrationMode.
struct IntegrationModeResponse {
  IntegrationMode mode = IntegrationMode::kWalltime;
  bool operator==(const IntegrationModeResponse&) const = default;
};

using Command =
    std::variant<CurrentBenchmark, StartBenchmark, StopBenchmark, Ack, PingPerf,
                 SetIntegration, Err, AddMarker, SetVersion, GetIntegrationMode,
                 IntegrationModeResponse>;

// The wire tag of a command (its variant index).
inline uint32_t command_tag(const Command& command) {
  return static_cast<uint32_t>(command.index());
}
// Name of the command kind, e.g. "SetVersion".
const char* command_name(const Command& command);
// One-line human description for logs, e.g. `SetVersion(2)`.
std::string describe(const Command& command);

}  // namespace runner::fifo
