// The shared profile store on S3. Layout under
// s3://BUCKET/PREFIX/<owner>/<repository>/:
//   refs/<ref key>/<run id>.json      a run of a push to a branch: its record
//   runs/<commit>/<run id>.tar.zst      and its folder (tar + zstd)
//   pulls/<number>/<run id>.json      a pull request's run (GitLab: a merge
//   pulls/<number>/<run id>.tar.zst     request's, by IID)
//   events/<event key>/<ref key>/<run id>.json      any other run (a tag,
//   events/<event key>/<ref key>/<run id>.tar.zst   a schedule, a manual
//                                                   run, outside CI)
// Only refs/ holds bases: `compare --store` reads nothing else, and takes a
// record there only when the record itself says it is a push to that
// branch (event "push", ref refs/heads/<branch>, no pull request, archive
// under runs/): the key alone proves nothing, as whoever writes to the
// store chooses it. Pull requests' jobs can so be given credentials that
// write under pulls/ only. A record (format::StoreRecord) is written after
// its archive, one object per run, so concurrent jobs never overwrite each
// other and a run is findable only once complete. <ref key> (and <event
// key>) is the name with every byte outside [A-Za-z0-9._-] written as ~XX;
// <run id> is <UTC YYYYMMDDTHHMMSSmmmZ>-<8 random hex digits>, so the newest
// record sorts last.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "upload/archive.hpp"
#include "upload/environment.hpp"
#include "upload/s3.hpp"

namespace runner::upload {

// What a run is to the store, from its facts: a push to a branch (GitHub
// and GitLab event "push" with ref refs/heads/<branch>), a pull or merge
// request's run (GitHub pull_request and pull_request_target, GitLab
// merge_request_event, or a refs/pull/ or refs/merge-requests/ ref), or
// anything else.
enum class RunKind { kPush, kPullRequest, kOther };

struct RunPlace {
  RunKind kind = RunKind::kOther;
  std::string branch;         // kPush: the branch pushed to
  uint64_t pull_request = 0;  // kPullRequest: its number
  std::string records;        // the key prefix of its record, '/'-ended
  std::string archives;       // the key prefix of its archive, '/'-ended
};

// Where the run of `facts` goes in the store at `location`. A pull
// request's run whose number is unknown goes under events/.
RunPlace run_place(const S3Location& location, const RunFacts& facts);

struct StoredRun {
  format::StoreRecord record;
  std::string record_key;
};

struct StoreUploadResult {
  StoredRun run;
  UploadCost cost;
};

// Per benchmark URI, what the record adds to its median: CPU time and
// instructions per iteration (format::StoredMedian), from the caller.
struct RunCountsByUri {
  std::map<std::string, double> cpu_ns, instructions;
};

// Packs `folder` (tar + zstd), uploads the archive, then the record.
base::Result<StoreUploadResult> store_upload(S3Client& client,
                                             const S3Location& location,
                                             const std::string& folder,
                                             const RunFacts& facts,
                                             std::ostream& log,
                                             const RunCountsByUri& counts = {});

// Why the record read from `key` is not a base for `branch` of the facts'
// repository (empty when it is): it must be a push to refs/heads/<branch>
// of that repository, not a pull request's, stored under that branch's
// refs/ key with its archive under runs/, with a plain commit and run id.
std::string base_record_problem(const format::StoreRecord& record,
                                const std::string& key,
                                const S3Location& location,
                                const RunFacts& facts,
                                const std::string& branch);

// At most this many of the newest records are read by find_newest_run.
inline constexpr size_t kMaxBaseCandidates = 100;

// The newest run of a push to `branch` of the facts' repository, from the
// refs/ records, newest first: a record that cannot be read (an HTTP error
// such as 404 or 403, one deleted since the listing, too big, not a
// record) or is not a base (base_record_problem) is skipped with a warning
// on `log`; a store that does not answer ends the lookup with its error.
// An error with code ENOENT when no record fits (the message names the
// prefix).
base::Result<StoredRun> find_newest_run(S3Client& client,
                                        const S3Location& location,
                                        const RunFacts& facts,
                                        const std::string& branch,
                                        std::ostream& log);

// What a record's benchmark_medians may hold to count in the history: at
// most this many entries, each URI once, each a finite time per iteration
// above 0 and at most kMaxMedianNs (1000 s), its interval holding it, its
// CPU time (when there) likewise a time, its instructions (when there)
// above 0 and at most kMaxInstructions.
inline constexpr size_t kMaxRecordMedians = 10000;
inline constexpr double kMaxMedianNs = 1e12;
inline constexpr double kMaxInstructions = 1e16;
// Runs of the base branch whose spread `compare --store` uses by default.
inline constexpr size_t kHistoryRuns = 10;

// The between-run noise of the branch: per benchmark URI, the median time
// per iteration of each of the last runs that recorded them.
struct BaseHistory {
  std::map<std::string, std::vector<double>> medians_ns;
  size_t runs = 0;  // records used
};

// Why a record's benchmark_medians cannot count (empty when they can):
// too many, a URI twice, a value that is not a time (NaN, infinite, 0 or
// less, above kMaxMedianNs).
std::string medians_problem(const format::StoreRecord& record);

// The medians of the newest `max_runs` records of pushes to `branch` that
// have them, newest first, with the validation of find_newest_run (at most
// kMaxBaseCandidates records read): a record that cannot be read, is not a
// base, or whose medians have a problem (medians_problem) is skipped with a
// warning on `log`; records of older runners (no medians) are passed over.
// An error only when the store does not answer.
base::Result<BaseHistory> find_base_history(S3Client& client,
                                            const S3Location& location,
                                            const RunFacts& facts,
                                            const std::string& branch,
                                            size_t max_runs, std::ostream& log);

// What a fetched run may take on disk, whatever its record says: at most
// max_bytes of files and max_entries files and folders, and at most
// kMaxUnpackRatio times the archive's size (but always kRatioFloor).
struct StoreLimits {
  uint64_t max_bytes = uint64_t{4} << 30;
  uint64_t max_entries = 20000;
  // The cache keeps the least recently used runs up to this many bytes.
  uint64_t cache_max_bytes = uint64_t{2} << 30;
};
inline constexpr uint64_t kMaxUnpackRatio = 1000;
inline constexpr uint64_t kRatioFloor = uint64_t{16} << 20;

// StoreLimits{} with RUNNER_STORE_MAX_UNPACK_MB, RUNNER_STORE_MAX_ENTRIES
// and RUNNER_STORE_CACHE_MAX_MB applied (a value that is not a number is
// warned about and ignored).
StoreLimits store_limits_from_environment(const Environment& env);

// Downloads and unpacks the run into <cache>/<run id>/ (reused when already
// complete there) within `limits`; returns that folder. The cache folder
// is created 0700 and must be ours and not a symlink; afterwards its least
// recently used runs are removed until it fits limits.cache_max_bytes
// (never the run returned).
base::Result<std::string> fetch_run(
    S3Client& client, const S3Location& location, const StoredRun& run,
    const std::string& cache, const StoreLimits& limits, std::ostream& log);

// $XDG_CACHE_HOME/runner/store, else $HOME/.cache/runner/store.
std::string default_store_cache(const Environment& env);

// The base of `runner compare --store`: where to look and for which
// branch.
struct StoreBaseQuery {
  std::string store;  // s3://BUCKET[/PREFIX]
  std::optional<std::string> s3_endpoint;
  std::optional<std::string> branch;  // else default_base_branch
  std::string checkout;               // whose facts name the repository
};

struct StoreBase {
  std::string folder;  // the run, unpacked in default_store_cache
  // The branch's between-run noise (find_base_history with kHistoryRuns);
  // empty when the store has none, and history_description then "".
  BaseHistory history;
  // "10 stored runs of pushes to 'main' in s3://<bucket>/<prefix>",
  // printable.
  std::string history_description;
  // "run <id> of a push to '<branch>' (commit <sha>, stored <time>) from
  // s3://<bucket>/<record key>", printable.
  std::string description;
};

// The newest run of a push to the branch (find_newest_run), fetched into
// the store cache with store_limits_from_environment (fetch_run), from the
// environment's credentials. `found` (when set) gets the description once
// the run is chosen, before its download. Warnings and progress go to
// `log`.
base::Result<StoreBase> fetch_store_base(
    const StoreBaseQuery& query, const Environment& env, std::ostream& log,
    const std::function<void(const std::string&)>& found = {});

// What `runner history` reads: the records of pushes to one branch.
struct HistoryQuery {
  std::string store;  // s3://BUCKET[/PREFIX]
  std::optional<std::string> s3_endpoint;
  std::optional<std::string> branch;  // else default_base_branch
  std::string checkout;               // whose facts name the repository
  // "OWNER/NAME" instead of the checkout's repository.
  std::optional<std::string> repository;
  size_t last = 100;  // the newest this many runs (at most kMaxHistoryRuns)
  // Reading records stops here (the listing included); the records not
  // read are counted.
  std::chrono::milliseconds budget{120000};
};
inline constexpr size_t kMaxHistoryRuns = 100000;
// Warnings about skipped records printed one by one before a count.
inline constexpr size_t kMaxSkipWarnings = 10;

// The branch's runs as the store's records give them.
struct BranchRuns {
  std::vector<StoredRun> runs;  // oldest first; each a base with valid medians
  size_t listed = 0;            // record keys under the branch's refs/
  size_t skipped = 0;   // unreadable, not a push to the branch, bad medians
  size_t not_read = 0;  // left when the budget ran out
  size_t from_cache = 0;
};

// The store of `runner history`: the branch's records, read through a
// cache of records (they never change once written; each is checked again
// whenever it is used), and its runs fetched on demand.
class StoreHistory {
 public:
  static base::Result<StoreHistory> open(const HistoryQuery& query,
                                         const Environment& env,
                                         std::ostream& log);
  // The newest query.last runs of the branch (base_record_problem and
  // medians_problem as find_base_history; warnings on the log).
  base::Result<BranchRuns> runs();
  // fetch_run into default_store_cache.
  base::Result<std::string> fetch(const StoredRun& run);
  const std::string& branch() const { return branch_; }
  const RunFacts& facts() const { return facts_; }
  // "s3://bucket/prefix", printable.
  std::string store_name() const;

 private:
  StoreHistory(HistoryQuery query, S3Location location, RunFacts facts,
               std::string branch, S3Client client, const Environment& env,
               std::ostream& log);
  base::Result<StoredRun> read_run(const std::string& key, bool& cached);

  HistoryQuery query_;
  S3Location location_;
  RunFacts facts_;
  std::string branch_;
  S3Client client_;
  std::string run_cache_, record_cache_;
  StoreLimits limits_;
  std::ostream* log_;
};

// A run id that is safe as a folder name: at most 128 bytes of
// [A-Za-z0-9._-], not starting with '.'.
bool safe_run_id(const std::string& id);

// The <ref key> of a branch name.
std::string ref_key(const std::string& branch);

// `text` with every byte outside printable ASCII written as '?': for
// what the store said, before it reaches a terminal.
std::string printable(std::string_view text);

}  // namespace runner::upload
