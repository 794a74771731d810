#include "agent/instrumentation_check.hpp"

#include <algorithm>
#include <set>

namespace runner::agent {
namespace {

bool saw_unparseable_traffic(const fifo::RunData::Counters& c) {
  return c.malformed_frames != 0 || c.oversized_frames != 0 || c.resyncs != 0 ||
         c.truncated_frames != 0;
}

bool any_window(const fifo::RunData& run) {
  return std::any_of(run.markers.begin(), run.markers.end(), [](const auto& m) {
    return m.type == fifo::MarkerType::kSampleStart;
  });
}

}  // namespace

std::optional<std::string> missing_instrumentation(
    const fifo::RunData& run, const std::vector<std::string>& result_uris) {
  if (!run.uri_by_ts.empty() || any_window(run)) return std::nullopt;
  const auto& c = run.counters;
  std::string why;
  if (!result_uris.empty()) {
    why = "the benchmark wrote results for " +
          std::to_string(result_uris.size()) + " benchmark(s)";
  } else if (saw_unparseable_traffic(c)) {
    why = "a client wrote to the FIFO";
  } else {
    return std::nullopt;
  }
  return why +
         " but none was announced to the runner (no StartBenchmark, no "
         "CurrentBenchmark): they ran unprofiled. FIFO: " +
         std::to_string(c.commands) + " commands, " +
         std::to_string(c.resyncs) + " resyncs (" +
         std::to_string(c.discarded_bytes) + " bytes skipped), " +
         std::to_string(c.truncated_frames) + " cut frames, " +
         std::to_string(c.malformed_frames) + " malformed, " +
         std::to_string(c.dropped_replies) + " dropped replies, " +
         std::to_string(c.write_errors) +
         " write errors. Does the integration see the runner's FIFOs?";
}

std::vector<std::string> unannounced_uris(
    const fifo::RunData& run, const std::vector<std::string>& result_uris) {
  std::set<std::string> announced;
  for (const auto& [ts, uri] : run.uri_by_ts) announced.insert(uri);
  std::set<std::string> seen;
  std::vector<std::string> out;
  for (const auto& uri : result_uris) {
    if (announced.count(uri) == 0 && seen.insert(uri).second)
      out.push_back(uri);
  }
  return out;
}

}  // namespace runner::agent
