// The base of `runner compare --store` (see store.hpp): the lookup in the
// store and the fetch into the cache, from the command's options.
#include <cstdint>

#include "base/base.hpp"
#include "upload/environment.hpp"
#include "upload/s3.hpp"
#include "upload/store.hpp"

namespace runner::upload {
namespace {

// Archives are only downloaded here: the threshold is the upload's default.
constexpr uint64_t kMultipartThreshold = 64ull << 20;

std::string describe(const StoredRun& run, const std::string& branch,
                     const S3Location& location) {
  const format::StoreRecord& record = run.record;
  return "run " + printable(record.run_id) + " of a push to '" +
         printable(branch) + "' (commit " + printable(record.commit) +
         ", stored " + printable(record.created_at) + ") from s3://" +
         location.bucket + "/" + printable(run.record_key);
}

// The branch's history into `base` (a store that stops answering: a
// warning, no history).
void add_history(StoreBase& base, S3Client& client, const S3Location& location,
                 const RunFacts& facts, const std::string& branch,
                 std::ostream& log) {
  auto history =
      find_base_history(client, location, facts, branch, kHistoryRuns, log);
  if (!history) {
    log << "warning: history of '" << printable(branch)
        << "' not read: " << printable(history.error().what()) << "\n";
    return;
  }
  if (history->runs == 0) return;
  base.history = std::move(*history);
  base.history_description = std::to_string(base.history.runs) + " stored run" +
                             (base.history.runs == 1 ? "" : "s") +
                             " of pushes to '" + printable(branch) +
                             "' in s3://" + location.bucket + "/" +
                             printable(location.prefix);
}

}  // namespace

base::Result<StoreBase> fetch_store_base(
    const StoreBaseQuery& query, const Environment& env, std::ostream& log,
    const std::function<void(const std::string&)>& found) {
  const std::string branch =
      query.branch ? *query.branch : default_base_branch(env);
  auto location = parse_s3_url(query.store);
  auto facts = collect_run_facts(query.checkout, env);
  if (!location) return location.error();
  if (!facts) return facts.error();
  auto config = s3_config_from_environment(env, query.s3_endpoint);
  if (!config) return config.error();
  config->multipart_threshold = kMultipartThreshold;
  auto client = S3Client::create(std::move(*config), log);
  if (!client) return client.error();
  auto run = find_newest_run(*client, *location, *facts, branch, log);
  if (!run) return run.error();
  StoreBase base;
  base.description = describe(*run, branch, *location);
  add_history(base, *client, *location, *facts, branch, log);
  if (found) found(base.description);
  auto folder = fetch_run(*client, *location, *run, default_store_cache(env),
                          store_limits_from_environment(env), log);
  if (!folder) return folder.error();
  base.folder = std::move(*folder);
  return base;
}

}  // namespace runner::upload
