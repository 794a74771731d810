// The shared profile store (see store.hpp for the layout).
#include "upload/store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>
#include <stdexcept>
#include <string_view>

#include "base/base.hpp"
#include "config.h"
#include "upload/archive.hpp"
#include "upload/digest.hpp"
#include "upload/store_records.hpp"

namespace runner::upload {
namespace {

constexpr uint64_t kMaxResultsFile = 64u << 20;

std::string join_key(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

std::string repository_prefix(const S3Location& location,
                              const RunFacts& facts) {
  return join_key(location.prefix,
                  ref_key(facts.owner) + "/" + ref_key(facts.repository));
}

// The number N of refs/pull/N/... (GitHub) or refs/merge-requests/N/...
// (GitLab).
std::optional<uint64_t> number_in_ref(std::string_view ref) {
  for (std::string_view start : {"refs/pull/", "refs/merge-requests/"}) {
    if (!ref.starts_with(start)) continue;
    std::string_view rest = ref.substr(start.size());
    rest = rest.substr(0, rest.find('/'));
    auto number = format::parse_dec(rest);
    if (number && *number > 0) return number;
  }
  return std::nullopt;
}

bool pull_request_event(std::string_view event) {
  return event == "pull_request" || event == "pull_request_target" ||
         event == "merge_request_event" ||
         event == "external_pull_request_event";
}

// A field of a record in a message: printable, and not all of it when it
// is long.
std::string shown(std::string_view text) {
  constexpr size_t kMax = 100;
  return printable(text.substr(0, kMax)) + (text.size() > kMax ? "..." : "");
}

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// <UTC YYYYMMDDTHHMMSSmmmZ>-<8 random hex digits>: unique, and sorting by
// it sorts by time.
std::string new_run_id(uint64_t unix_ms) {
  const time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm utc {};
  ::gmtime_r(&seconds, &utc);
  char time_text[32];
  std::strftime(time_text, sizeof(time_text), "%Y%m%dT%H%M%S", &utc);
  uint8_t random[4] = {};
  if (::getrandom(random, sizeof(random), 0) != sizeof(random))
    throw std::runtime_error("getrandom failed");
  char id[64];
  std::snprintf(id, sizeof(id), "%s%03uZ-%s", time_text,
                static_cast<unsigned>(unix_ms % 1000),
                base::to_hex(random).c_str());
  return id;
}

std::string iso_time(uint64_t unix_ms) {
  const time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm utc {};
  ::gmtime_r(&seconds, &utc);
  char text[40];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03uZ", text,
                static_cast<unsigned>(unix_ms % 1000));
  return out;
}

// The entries of the folder's results/*.json (unreadable files are
// skipped: the record only lists them).
std::vector<format::BenchmarkResult> folder_results(const std::string& folder) {
  const std::string dir = format::ProfileLayout(folder).results_dir();
  std::vector<format::BenchmarkResult> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0)
      continue;
    base::ReadOptions options;
    options.max_size = kMaxResultsFile;
    auto text = base::read_file(dir + "/" + name, options);
    if (!text) continue;
    auto results = format::read_walltime_results(*text);
    if (!results) continue;
    for (auto& b : results->benchmarks) out.push_back(std::move(b));
  }
  ::closedir(d);
  return out;
}

// The record's benchmarks and their medians (none when there are more than
// kMaxRecordMedians, as no reader would take them).
std::optional<double> count_of(const std::map<std::string, double>& counts,
                               const std::string& uri) {
  auto it = counts.find(uri);
  if (it == counts.end() || !std::isfinite(it->second) || !(it->second > 0))
    return std::nullopt;
  return it->second;
}

void describe_benchmarks(const std::string& folder,
                         const RunCountsByUri& counts, format::StoreRecord& r) {
  const auto results = folder_results(folder);
  for (auto& m : format::per_iteration_medians(results)) {
    r.benchmarks.push_back(m.uri);
    if (std::isfinite(m.median_ns) && m.median_ns > 0)
      r.benchmark_medians.push_back({m.uri, m.median_ns, m.low_ns, m.high_ns,
                                     count_of(counts.cpu_ns, m.uri),
                                     count_of(counts.instructions, m.uri)});
  }
  if (r.benchmark_medians.size() > kMaxRecordMedians)
    r.benchmark_medians.clear();
}

format::StoreRecord record_of(const RunFacts& facts, const RunPlace& place,
                              uint64_t unix_ms) {
  format::StoreRecord r;
  r.owner = facts.owner;
  r.repository = facts.repository;
  r.branch = place.kind == RunKind::kPush ? place.branch : facts.branch;
  r.ref = facts.ref;
  r.commit = facts.commit;
  r.run_id = new_run_id(unix_ms);
  r.created_at = iso_time(unix_ms);
  r.created_unix_ms = unix_ms;
  r.event = facts.event;
  if (place.kind == RunKind::kPullRequest) r.pull_request = place.pull_request;
  r.ci_run_url = facts.run_url;
  r.runner_version = RUNNER_VERSION;
  return r;
}

uint64_t now_unix_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

}  // namespace

std::string ref_key(const std::string& branch) {
  std::string out;
  for (const unsigned char c : branch) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '~';
      base::append_hex(out, c, base::HexCase::kUpper);
    }
  }
  if (out.empty() || out == "." || out == "..") out = "~" + out;
  return out;
}

std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

bool safe_run_id(const std::string& id) {
  return !id.empty() && id.size() <= 128 && id[0] != '.' &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                  c == '_' || c == '.';
         });
}

RunPlace run_place(const S3Location& location, const RunFacts& facts) {
  const std::string repository = repository_prefix(location, facts);
  RunPlace place;
  const bool pull_request = facts.pull_request || facts.head_ref ||
                            pull_request_event(facts.event) ||
                            number_in_ref(facts.ref);
  if (pull_request) {
    const auto number =
        facts.pull_request ? facts.pull_request : number_in_ref(facts.ref);
    if (number && *number > 0) {
      place.kind = RunKind::kPullRequest;
      place.pull_request = *number;
      place.records = place.archives =
          repository + "/pulls/" + std::to_string(*number) + "/";
      return place;
    }
  } else if (facts.event == "push" && facts.ref.starts_with("refs/heads/") &&
             facts.ref.size() > 11) {
    place.kind = RunKind::kPush;
    place.branch = facts.ref.substr(11);
    place.records = refs_prefix(location, facts, place.branch);
    place.archives = repository + "/runs/" + ref_key(facts.commit) + "/";
    return place;
  }
  place.records = place.archives =
      repository + "/events/" + ref_key(facts.event) + "/" +
      ref_key(facts.ref.empty() ? facts.branch : facts.ref) + "/";
  return place;
}

base::Result<StoreUploadResult> store_upload(
    S3Client& client, const S3Location& location, const std::string& folder,
    const RunFacts& facts, std::ostream& log, const RunCountsByUri& counts) {
  const uint64_t start = base::monotonic_ns();
  auto archive = pack_folder(folder, ArchiveCompression::kZstd);
  if (!archive) return archive.error();
  auto digest = digest_fd(archive->fd.get());
  if (!digest) return digest.error();
  const RunPlace place = run_place(location, facts);
  StoreUploadResult result;
  format::StoreRecord& record = result.run.record;
  record = record_of(facts, place, now_unix_ms());
  record.archive_key = place.archives + record.run_id + ".tar.zst";
  record.archive_bytes = archive->size;
  record.archive_sha256 = digest->sha256_hex;
  record.folder_bytes = archive->folder_bytes;
  describe_benchmarks(folder, counts, record);
  log << "storing " << archive->size << " bytes as s3://" << location.bucket
      << "/" << record.archive_key << "\n";
  if (auto put = client.put_object(location.bucket, record.archive_key,
                                   archive->fd.get(), archive->size,
                                   "application/zstd");
      !put)
    return put.error();
  result.run.record_key = place.records + record.run_id + ".json";
  if (auto put = client.put_text(location.bucket, result.run.record_key,
                                 format::write_store_record(record),
                                 "application/json");
      !put)
    return put.error();
  result.cost = upload_cost(*archive, start);
  return result;
}

std::string base_record_problem(const format::StoreRecord& record,
                                const std::string& key,
                                const S3Location& location,
                                const RunFacts& facts,
                                const std::string& branch) {
  const std::string ref = "refs/heads/" + branch;
  if (record.owner != facts.owner || record.repository != facts.repository)
    return "a run of another repository";
  if (record.pull_request)
    return "the run of pull request " + std::to_string(*record.pull_request);
  if (record.event != "push")
    return "not the run of a push (event '" + shown(record.event) + "')";
  if (record.ref != ref)
    return "the run of " + shown(record.ref) + ", not of " + shown(ref);
  if (record.branch != branch)
    return "it names the branch '" + shown(record.branch) + "'";
  if (!safe_run_id(record.run_id) ||
      key != refs_prefix(location, facts, branch) + record.run_id + ".json")
    return "its run id does not match its key";
  const std::string runs = repository_prefix(location, facts) + "/runs/";
  if (!record.archive_key.starts_with(runs) ||
      record.archive_key.find("/.") != std::string::npos)
    return "its archive is not under " + runs;
  if ((record.commit.size() != 40 && record.commit.size() != 64) ||
      !is_hex(record.commit))
    return "its commit is not a SHA in hex";
  if (record.created_at.size() > 40 ||
      record.created_at.find_first_not_of("0123456789-T:.Z") !=
          std::string::npos)
    return "its time is not UTC ISO 8601";
  return {};
}

// The prefix of the records of pushes to `branch`.
std::string refs_prefix(const S3Location& location, const RunFacts& facts,
                        const std::string& branch) {
  return repository_prefix(location, facts) + "/refs/" + ref_key(branch) + "/";
}

// No answer from the store at all (as opposed to an answer about one
// object): the next record would fare no better.
bool store_unreachable(const base::Error& error) {
  const int code = error.code();
  return code == ECONNREFUSED || code == ETIMEDOUT || code == ECONNRESET ||
         code == EHOSTUNREACH || code == EIO;
}

// The keys of the records directly under `prefix`, newest first.
std::vector<std::string> record_keys(
    const std::vector<format::S3Object>& objects, const std::string& prefix) {
  std::vector<std::string> keys;
  for (const auto& o : objects) {
    const std::string_view name =
        std::string_view(o.key).substr(std::min(prefix.size(), o.key.size()));
    if (o.key.starts_with(prefix) && name.size() > 5 &&
        name.ends_with(".json") && name.find('/') == std::string_view::npos)
      keys.push_back(o.key);
  }
  std::sort(keys.rbegin(), keys.rend());
  return keys;
}

base::Result<StoredRun> parse_base_run(const std::string& text,
                                       const S3Location& location,
                                       const RunFacts& facts,
                                       const std::string& branch,
                                       const std::string& key) {
  auto record = format::read_store_record(text);
  if (!record) return record.error();
  const std::string problem =
      base_record_problem(*record, key, location, facts, branch);
  if (!problem.empty()) return base::Error("not a base: " + problem);
  return StoredRun{std::move(*record), key};
}

base::Result<StoredRun> read_base_run(S3Client& client,
                                      const S3Location& location,
                                      const RunFacts& facts,
                                      const std::string& branch,
                                      const std::string& key) {
  auto text = client.get_text(location.bucket, key);
  if (!text) return text.error();
  return parse_base_run(*text, location, facts, branch, key);
}

base::Result<StoredRun> find_newest_run(S3Client& client,
                                        const S3Location& location,
                                        const RunFacts& facts,
                                        const std::string& branch,
                                        std::ostream& log) {
  const std::string prefix = refs_prefix(location, facts, branch);
  auto objects = client.list(location.bucket, prefix);
  if (!objects) return objects.error();
  const std::vector<std::string> keys = record_keys(*objects, prefix);
  size_t skipped = 0;
  for (const std::string& key : keys) {
    if (skipped == kMaxBaseCandidates) break;
    auto run = read_base_run(client, location, facts, branch, key);
    if (run) return run;
    if (store_unreachable(run.error())) return run.error();
    ++skipped;
    log << "warning: s3://" << location.bucket << "/" << printable(key)
        << " skipped: " << printable(run.error().what()) << "\n";
  }
  std::string why = "no run of branch '" + printable(branch) + "' in s3://" +
                    location.bucket + "/" + prefix;
  if (skipped > 0)
    why +=
        " (" + std::to_string(skipped) + " record" + (skipped > 1 ? "s" : "") +
        " skipped" +
        (skipped < keys.size() ? ", " + std::to_string(keys.size() - skipped) +
                                     " older ones not read"
                               : "") +
        ")";
  return base::Error(why, ENOENT);
}

std::string medians_problem(const format::StoreRecord& record) {
  const auto& medians = record.benchmark_medians;
  if (medians.size() > kMaxRecordMedians)
    return std::to_string(medians.size()) + " medians, more than " +
           std::to_string(kMaxRecordMedians);
  std::set<std::string_view> seen;
  for (const format::StoredMedian& m : medians) {
    if (!seen.insert(m.uri).second)
      return "the benchmark " + shown(m.uri) + " has two medians";
    if (!std::isfinite(m.median_ns) || !(m.median_ns > 0) ||
        m.median_ns > kMaxMedianNs) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", m.median_ns);
      return "the median of " + shown(m.uri) +
             " is not a time per iteration (" + value + " ns)";
    }
    const bool interval_bad =
        m.low_ns && !(*m.low_ns > 0 && *m.low_ns <= m.median_ns && m.high_ns &&
                      *m.high_ns >= m.median_ns && *m.high_ns <= kMaxMedianNs);
    if (interval_bad)
      return "the interval of " + shown(m.uri) + " does not hold its median";
    if (m.cpu_ns && !(*m.cpu_ns > 0 && *m.cpu_ns <= kMaxMedianNs))
      return "the CPU time of " + shown(m.uri) + " is not a time";
    if (m.instructions &&
        !(*m.instructions > 0 && *m.instructions <= kMaxInstructions))
      return "the instructions of " + shown(m.uri) + " are not a count";
  }
  return {};
}

base::Result<BaseHistory> find_base_history(
    S3Client& client, const S3Location& location, const RunFacts& facts,
    const std::string& branch, size_t max_runs, std::ostream& log) {
  const std::string prefix = refs_prefix(location, facts, branch);
  auto objects = client.list(location.bucket, prefix);
  if (!objects) return objects.error();
  BaseHistory history;
  size_t read = 0;
  for (const std::string& key : record_keys(*objects, prefix)) {
    if (history.runs == max_runs || read == kMaxBaseCandidates) break;
    ++read;
    auto run = read_base_run(client, location, facts, branch, key);
    std::string problem;
    if (!run && store_unreachable(run.error())) return run.error();
    if (!run)
      problem = run.error().what();
    else
      problem = medians_problem(run->record);
    if (!problem.empty()) {
      log << "warning: history: s3://" << location.bucket << "/"
          << printable(key) << " skipped: " << printable(problem) << "\n";
      continue;
    }
    if (run->record.benchmark_medians.empty()) continue;  // older runner
    ++history.runs;
    for (const format::StoredMedian& m : run->record.benchmark_medians)
      history.medians_ns[m.uri].push_back(m.median_ns);
  }
  return history;
}

std::string default_store_cache(const Environment& env) {
  return base::cache_directory("store", env_value(env, "XDG_CACHE_HOME"),
                               env_value(env, "HOME"));
}

}  // namespace runner::upload
