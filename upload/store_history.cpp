// The store as `runner history` reads it (see store.hpp): a branch's
// records, newest first within a time budget, through a private cache of
// records.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "base/base.hpp"
#include "upload/digest.hpp"
#include "upload/s3.hpp"
#include "upload/store.hpp"
#include "upload/store_records.hpp"

namespace runner::upload {
namespace {

constexpr uint64_t kMaxRecordBytes = 1u << 20;
// The records' cache keeps this many bytes (a record of 50 benchmarks is
// about 8 KB).
constexpr uint64_t kRecordCacheBytes = uint64_t{256} << 20;

// "OWNER/NAME" into the facts.
base::Status apply_repository(RunFacts& facts, const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size() ||
      name.find('/', slash + 1) != std::string::npos)
    return base::Error("--repository '" + printable(name) +
                       "' is not OWNER/NAME");
  facts.owner = name.substr(0, slash);
  facts.repository = name.substr(slash + 1);
  return {};
}

base::Result<RunFacts> history_facts(const HistoryQuery& query,
                                     const Environment& env) {
  if (!query.repository) return collect_run_facts(query.checkout, env);
  RunFacts facts;
  if (auto s = apply_repository(facts, *query.repository); !s) return s.error();
  return facts;
}

void warn_skipped(std::ostream& log, size_t skipped, const std::string& where,
                  const std::string& why) {
  if (skipped <= kMaxSkipWarnings)
    log << "warning: history: " << where << " skipped: " << printable(why)
        << "\n";
  if (skipped == kMaxSkipWarnings)
    log << "warning: history: further skipped records are only counted\n";
}

// The records' cache within kRecordCacheBytes, oldest written first.
void evict_records(int cache_fd) {
  std::vector<base::CacheEntry> entries;
  for (const std::string& name : base::entry_names(cache_fd)) {
    struct stat st {};
    if (::fstatat(cache_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode))
      entries.push_back({name, static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  base::evict_least_recently_used(cache_fd, std::move(entries),
                                  kRecordCacheBytes);
}

}  // namespace

StoreHistory::StoreHistory(HistoryQuery query, S3Location location,
                           RunFacts facts, std::string branch, S3Client client,
                           const Environment& env, std::ostream& log)
    : query_(std::move(query)),
      location_(std::move(location)),
      facts_(std::move(facts)),
      branch_(std::move(branch)),
      client_(std::move(client)),
      run_cache_(default_store_cache(env)),
      record_cache_(base::cache_directory("store-records",
                                          env_value(env, "XDG_CACHE_HOME"),
                                          env_value(env, "HOME"))),
      limits_(store_limits_from_environment(env)),
      log_(&log) {}

base::Result<StoreHistory> StoreHistory::open(const HistoryQuery& query,
                                              const Environment& env,
                                              std::ostream& log) {
  auto location = parse_s3_url(query.store);
  if (!location) return location.error();
  auto facts = history_facts(query, env);
  if (!facts) return facts.error();
  auto config = s3_config_from_environment(env, query.s3_endpoint);
  if (!config) return config.error();
  config->list_limits.max_time =
      std::min(config->list_limits.max_time, query.budget);
  auto client = S3Client::create(std::move(*config), log);
  if (!client) return client.error();
  std::string branch = query.branch ? *query.branch : default_base_branch(env);
  return StoreHistory(query, std::move(*location), std::move(*facts),
                      std::move(branch), std::move(*client), env, log);
}

std::string StoreHistory::store_name() const {
  return "s3://" + location_.bucket +
         (location_.prefix.empty() ? "" : "/" + printable(location_.prefix));
}

// The record at `key`: from the cache when it is there, else from the store
// (then kept in the cache when it is a base).
base::Result<StoredRun> StoreHistory::read_run(const std::string& key,
                                               bool& cached) {
  const std::string path = record_cache_ + "/" + sha256_hex(key) + ".json";
  base::ReadOptions options;
  options.max_size = kMaxRecordBytes;
  options.owner = ::geteuid();
  cached = false;
  if (auto text = base::read_file(path, options)) {
    cached = true;
    return parse_base_run(*text, location_, facts_, branch_, key);
  }
  auto text = client_.get_text(location_.bucket, key, kMaxRecordBytes);
  if (!text) return text.error();
  auto run = parse_base_run(*text, location_, facts_, branch_, key);
  if (run) (void)base::write_file_atomic(path, *text);
  return run;
}

base::Result<BranchRuns> StoreHistory::runs() {
  const auto deadline = std::chrono::steady_clock::now() + query_.budget;
  const std::string prefix = refs_prefix(location_, facts_, branch_);
  auto objects = client_.list(location_.bucket, prefix);
  if (!objects) return objects.error();
  auto cache = base::open_cache_folder(record_cache_);
  if (!cache) return cache.error();
  const std::vector<std::string> keys = record_keys(*objects, prefix);
  BranchRuns out;
  out.listed = keys.size();
  const size_t last = std::min(query_.last, kMaxHistoryRuns);
  for (size_t i = 0; i < keys.size() && out.runs.size() < last; ++i) {
    if (std::chrono::steady_clock::now() > deadline) {
      out.not_read = keys.size() - i;
      *log_ << "warning: history: the time budget ran out; " << out.not_read
            << " older records not read\n";
      break;
    }
    bool cached = false;
    auto run = read_run(keys[i], cached);
    if (!run && store_unreachable(run.error())) return run.error();
    const std::string problem =
        run ? medians_problem(run->record) : run.error().what();
    out.from_cache += cached ? 1 : 0;
    if (!problem.empty()) {
      warn_skipped(*log_, ++out.skipped,
                   "s3://" + location_.bucket + "/" + printable(keys[i]),
                   problem);
      continue;
    }
    out.runs.push_back(std::move(*run));
  }
  std::reverse(out.runs.begin(), out.runs.end());
  evict_records(cache->get());
  return out;
}

base::Result<std::string> StoreHistory::fetch(const StoredRun& run) {
  return fetch_run(client_, location_, run, run_cache_, limits_, *log_);
}

}  // namespace runner::upload
