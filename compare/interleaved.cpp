#include "compare/interleaved.hpp"

#include <algorithm>
#include <cerrno>
#include <utility>

namespace runner::compare {
namespace {

// ExecutionTimestamps.msgpack is at most this big (as samples.cpp reads it).
constexpr uint64_t kMaxTimestampsFile = uint64_t{256} << 20;

constexpr const char* kHowToMake =
    " (an interleaved folder comes from 'runner exec --interleave -- "
    "COMMAND_A ::: COMMAND_B')";

// The URIs in the order the runner was told them (CurrentBenchmark), or
// nullopt when the folder has no readable ExecutionTimestamps.msgpack.
std::optional<std::vector<std::string>> announced_uris(
    const std::string& folder, std::vector<std::string>& warnings) {
  const format::ProfileLayout layout(folder);
  base::ReadOptions options;
  options.max_size = kMaxTimestampsFile;
  auto bytes = base::read_file(layout.execution_timestamps(), options);
  if (!bytes) {
    if (bytes.error().code() != ENOENT)
      warnings.push_back(bytes.error().what());
    return std::nullopt;
  }
  std::vector<std::string> notes;
  auto decoded = format::read_execution_timestamps(*bytes, notes);
  for (auto& note : notes) warnings.push_back(folder + ": " + note);
  if (!decoded || !decoded->has_value()) return std::nullopt;
  std::vector<std::string> uris;
  for (const auto& [ts, uri] : (*decoded)->uri_by_ts) uris.push_back(uri);
  return uris;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

base::Status check_abba_order(const std::vector<std::string>& uris,
                              const std::string& a, const std::string& b,
                              uint64_t pairs) {
  if (uris.size() != 2 * pairs)
    return base::Error("the runner was told " + std::to_string(uris.size()) +
                       " rounds, the results hold " +
                       std::to_string(2 * pairs));
  for (uint64_t i = 0; i < uris.size(); ++i) {
    // Pair p = i / 2 runs A first when p is even.
    const bool first = i % 2 == 0, even_pair = (i / 2) % 2 == 0;
    const std::string& expected = first == even_pair ? a : b;
    if (uris[i] != expected)
      return base::Error("round " + std::to_string(i + 1) + " of the run was " +
                         quoted(uris[i]) + ", expected " + quoted(expected) +
                         " (ABBA order)");
  }
  return {};
}

base::Result<InterleavedPair> load_interleaved(const std::string& folder,
                                               format::Metric metric) {
  const std::string where = "interleaved folder " + quoted(folder);
  auto loaded = load_side("interleaved", {folder}, metric);
  if (!loaded) return std::move(loaded).error();
  LoadedSide& side = *loaded;
  if (side.benchmarks.size() != 2)
    return base::Error(
        where + ": holds " + std::to_string(side.benchmarks.size()) +
        " benchmarks, not the two of one interleaved run" + kHowToMake);
  InterleavedPair pair{std::move(side.benchmarks[0]),
                       std::move(side.benchmarks[1]), std::move(side.warnings)};
  for (const BenchmarkSamples* b : {&pair.base, &pair.head}) {
    if (b->samples.source == format::SampleSource::kRuns)
      return base::Error(where + ": benchmark " + quoted(b->name) +
                         ": --metric " +
                         std::string(format::metric_name(metric)) +
                         ": no count per round (its rounds have no benchmark "
                         "window each in runner.counters.json)");
    if (b->samples.source != format::SampleSource::kRounds)
      return base::Error(where + ": benchmark " + quoted(b->name) +
                         " has no round times in its results JSON" +
                         kHowToMake);
  }
  const size_t n = pair.base.samples.times_ns.size();
  if (pair.head.samples.times_ns.size() != n)
    return base::Error(
        where + ": " + quoted(pair.base.name) + " has " + std::to_string(n) +
        " rounds, " + quoted(pair.head.name) + " " +
        std::to_string(pair.head.samples.times_ns.size()) +
        ": the rounds of an interleaved run come in pairs" + kHowToMake);
  auto uris = announced_uris(folder, pair.warnings);
  if (!uris) {
    pair.warnings.push_back(
        where +
        ": no ExecutionTimestamps.msgpack, the ABBA order of the rounds "
        "could not be checked");
    return pair;
  }
  if (auto order = check_abba_order(*uris, pair.base.uri, pair.head.uri, n);
      !order)
    return base::Error(where + ": not an interleaved run: " +
                       order.error().message() + kHowToMake);
  return pair;
}

}  // namespace runner::compare
