// The record of one run in the shared profile store (upload/store.hpp): a
// small JSON object per run, naming the run's archive. Versioned; unknown
// members are ignored on read. What the record says is checked by its
// reader (upload/store.cpp): the store is shared with pull requests' jobs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

inline constexpr int kStoreRecordVersion = 1;

// One benchmark's median time per iteration in a stored run and, when
// its rounds gave one, the 95% interval of that median ("low_ns",
// "high_ns"; absent in records of older runners and for benchmarks with
// summaries only).
//
// "cpu_ns" and "instructions": the benchmark's CPU time (task-clock) and
// instructions per iteration over the run, when the runner counted them
// (runner.counters.json; compare::run_counts); absent otherwise.
struct StoredMedian {
  std::string uri;
  double median_ns = 0;
  std::optional<double> low_ns, high_ns;
  std::optional<double> cpu_ns, instructions;
  bool operator==(const StoredMedian&) const = default;
};

struct StoreRecord {
  int version = kStoreRecordVersion;
  std::string owner;
  std::string repository;
  std::string branch;      // "main", "feat/x" (a pull request's: its head)
  std::string ref;         // "refs/heads/main", "refs/pull/7/merge"
  std::string commit;      // full SHA
  std::string run_id;      // unique per run: <time>-<random>
  std::string created_at;  // ISO 8601 UTC with milliseconds
  uint64_t created_unix_ms = 0;
  std::string event;  // "push", "pull_request", "local"
  // The pull request's number (GitLab: the merge request's IID); null in
  // the JSON, and absent in records of older runners, for other runs.
  std::optional<uint64_t> pull_request;
  std::string ci_run_url;  // "" outside CI
  std::string archive_key;
  uint64_t archive_bytes = 0;
  std::string archive_sha256;
  std::string compression = "zstd";
  uint64_t folder_bytes = 0;
  std::vector<std::string> benchmarks;  // URIs of results/*.json
  std::string runner_version;
  // "benchmark_medians": per benchmark of results/*.json, its median time
  // per iteration (format::median_per_iteration_ns), by URI; the between-run
  // noise of `compare --store` comes from those of the branch's last runs.
  // Absent in records of older runners (empty); older runners ignore it.
  // Only typed here: whoever reads the history checks the values.
  std::vector<StoredMedian> benchmark_medians;
};

std::string write_store_record(const StoreRecord& record);
// Missing or mistyped members are errors naming them; a version above
// kStoreRecordVersion is refused.
base::Result<StoreRecord> read_store_record(std::string_view text);

}  // namespace runner::format
