#include "fifo/command.hpp"

#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>

#include "base/base.hpp"

namespace runner::fifo {
namespace {

constexpr size_t kMaxQuoted = 256;

// Quotes a string for a log line; control bytes and non-ASCII are escaped so
// a hostile URI cannot forge log lines, and long strings are cut.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text.substr(0, kMaxQuoted)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      base::append_hex(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (text.size() > kMaxQuoted)
    out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace

const char* marker_name(MarkerType type) {
  switch (type) {
    case MarkerType::kSampleStart:
      return "SampleStart";
    case MarkerType::kSampleEnd:
      return "SampleEnd";
    case MarkerType::kRoundStart:
      return "RoundStart";
    case MarkerType::kRoundEnd:
      return "RoundEnd";
  }
  return "UnknownMarker";
}

const char* integration_mode_name(IntegrationMode mode) {
  switch (mode) {
    case IntegrationMode::kWalltime:
      return "Walltime";
    case IntegrationMode::kSimulation:
      return "Simulation";
    case IntegrationMode::kAnalysis:
      return "Analysis";
  }
  return "UnknownMode";
}

const char* command_name(const Command& command) {
  static constexpr const char* kNames[] = {"CurrentBenchmark",
                                           "StartBenchmark",
                                           "StopBenchmark",
                                           "Ack",
                                           "PingPerf",
                                           "SetIntegration",
                                           "Err",
                                           "AddMarker",
                                           "SetVersion",
                                           "GetIntegrationMode",
                                           "IntegrationModeResponse"};
  static_assert(std::size(kNames) == std::variant_size_v<Command>);
  return kNames[command.index()];
}

std::string describe(const Command& command) {
  std::ostringstream out;
  out << command_name(command);
  std::visit(
      [&out](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, CurrentBenchmark>) {
          out << "{pid=" << c.pid << ", uri=" << quoted(c.uri) << "}";
        } else if constexpr (std::is_same_v<T, SetIntegration>) {
          out << "{name=" << quoted(c.name) << ", version=" << quoted(c.version)
              << "}";
        } else if constexpr (std::is_same_v<T, AddMarker>) {
          out << "{pid=" << c.pid << ", " << marker_name(c.marker.type) << "("
              << c.marker.timestamp << ")}";
        } else if constexpr (std::is_same_v<T, SetVersion>) {
          out << "(" << c.version << ")";
        } else if constexpr (std::is_same_v<T, IntegrationModeResponse>) {
          out << "(" << integration_mode_name(c.mode) << ")";
        }
      },
      command);
  return out.str();
}

}  // namespace runner::fifo
