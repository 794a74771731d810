// ExecutionTimestamps.msgpack (docs/formats.md): the benchmark
// URIs with the time they were announced, and the markers in arrival order.
// msgpack map(2) {"uri_by_ts": [[ts, uri], ...], "markers": [{"<Kind>": ts},
// ...]} with the smallest integer forms. perf.metadata keeps a JSON copy of
// both lists (same shapes), read by the same code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

struct Marker {
  // "SampleStart", "SampleEnd", "RoundStart", "RoundEnd", "BenchmarkStart",
  // "BenchmarkEnd" (older name of Round*); readers keep unknown kinds.
  std::string kind;
  uint64_t timestamp = 0;

  bool operator==(const Marker&) const = default;
};

struct ExecutionTimestamps {
  std::vector<std::pair<uint64_t, std::string>> uri_by_ts;
  std::vector<Marker> markers;

  bool operator==(const ExecutionTimestamps&) const = default;
};

std::string write_execution_timestamps(const ExecutionTimestamps& timestamps);

// The lists of a decoded document. Error: the bytes are not msgpack, or
// nest deeper than kMaxDocumentDepth ("ExecutionTimestamps.msgpack is
// corrupt: nested deeper than 128 levels"); std::nullopt: msgpack, but not a
// map (nothing to read). Malformed entries are skipped and noted in
// `warnings` ("ExecutionTimestamps.msgpack: markers[2]: ...: ignored").
base::Result<std::optional<ExecutionTimestamps>> read_execution_timestamps(
    std::string_view bytes, std::vector<std::string>& warnings);

}  // namespace runner::format
