// The shared profile store (see store.hpp for the layout).
#include "upload/store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "base/base.hpp"
#include "config.h"
#include "upload/archive.hpp"
#include "upload/digest.hpp"

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

std::string refs_prefix(const S3Location& location, const RunFacts& facts,
                        const std::string& branch) {
  return repository_prefix(location, facts) + "/refs/" + ref_key(branch) + "/";
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
                hex_encode(random).c_str());
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

// The URIs of the benchmarks in the folder's results/*.json (unreadable
// files are skipped: the record only lists them).
std::vector<std::string> benchmark_uris(const std::string& folder) {
  const std::string dir = format::ProfileLayout(folder).results_dir();
  std::vector<std::string> uris;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return uris;
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
    for (const auto& b : results->benchmarks) uris.push_back(b.uri);
  }
  ::closedir(d);
  std::sort(uris.begin(), uris.end());
  uris.erase(std::unique(uris.begin(), uris.end()), uris.end());
  return uris;
}

format::StoreRecord record_of(const RunFacts& facts, uint64_t unix_ms) {
  format::StoreRecord r;
  r.owner = facts.owner;
  r.repository = facts.repository;
  r.branch = facts.branch;
  r.ref = facts.ref;
  r.commit = facts.commit;
  r.run_id = new_run_id(unix_ms);
  r.created_at = iso_time(unix_ms);
  r.created_unix_ms = unix_ms;
  r.event = facts.event;
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
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : branch) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '~';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.empty() || out == "." || out == "..") out = "~" + out;
  return out;
}

base::Result<StoreUploadResult> store_upload(S3Client& client,
                                             const S3Location& location,
                                             const std::string& folder,
                                             const RunFacts& facts,
                                             std::ostream& log) {
  const uint64_t start = base::monotonic_ns();
  auto archive = pack_folder(folder, ArchiveCompression::kZstd);
  if (!archive) return archive.error();
  auto digest = digest_fd(archive->fd.get());
  if (!digest) return digest.error();
  StoreUploadResult result;
  format::StoreRecord& record = result.run.record;
  record = record_of(facts, now_unix_ms());
  record.archive_key = repository_prefix(location, facts) + "/runs/" +
                       ref_key(facts.commit) + "/" + record.run_id + ".tar.zst";
  record.archive_bytes = archive->size;
  record.archive_sha256 = digest->sha256_hex;
  record.folder_bytes = archive->folder_bytes;
  record.benchmarks = benchmark_uris(folder);
  log << "storing " << archive->size << " bytes as s3://" << location.bucket
      << "/" << record.archive_key << "\n";
  if (auto put = client.put_object(location.bucket, record.archive_key,
                                   archive->fd.get(), archive->size,
                                   "application/zstd");
      !put)
    return put.error();
  result.run.record_key =
      refs_prefix(location, facts, facts.branch) + record.run_id + ".json";
  if (auto put = client.put_text(location.bucket, result.run.record_key,
                                 format::write_store_record(record),
                                 "application/json");
      !put)
    return put.error();
  result.cost = upload_cost(*archive, start);
  return result;
}

base::Result<StoredRun> find_newest_run(S3Client& client,
                                        const S3Location& location,
                                        const RunFacts& facts,
                                        const std::string& branch) {
  const std::string prefix = refs_prefix(location, facts, branch);
  auto objects = client.list(location.bucket, prefix);
  if (!objects) return objects.error();
  std::vector<std::string> keys;
  for (const auto& o : *objects)
    if (o.key.size() > 5 && o.key.compare(o.key.size() - 5, 5, ".json") == 0)
      keys.push_back(o.key);
  std::sort(keys.rbegin(), keys.rend());
  for (const std::string& key : keys) {
    auto text = client.get_text(location.bucket, key);
    if (!text) return text.error();
    auto record = format::read_store_record(*text);
    if (!record || record->branch != branch ||
        record->repository != facts.repository ||
        record->owner != facts.owner) {
      RUNNER_LOG("upload", kWarning)
          << "s3://" << location.bucket << "/" << key << ": skipped ("
          << (record ? "for another branch or repository"
                     : record.error().message())
          << ")";
      continue;
    }
    return StoredRun{std::move(*record), key};
  }
  return base::Error("no run of branch '" + branch + "' in s3://" +
                         location.bucket + "/" + prefix,
                     ENOENT);
}

std::string default_store_cache(const Environment& env) {
  return base::cache_directory("store", env_value(env, "XDG_CACHE_HOME"),
                               env_value(env, "HOME"));
}

}  // namespace runner::upload
