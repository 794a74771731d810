// A stored run, downloaded and unpacked into the local cache (see
// store.hpp): into a private partial folder first, checked against the
// record's SHA-256 and the runner's own limits (never the record's sizes),
// then renamed into place, so that a folder in the cache is either complete
// or absent. The cache folder is private (base::open_cache_folder) and
// keeps its least recently used runs up to a cap.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "base/base.hpp"
#include "format/format.hpp"
#include "upload/archive.hpp"
#include "upload/digest.hpp"
#include "upload/store.hpp"

namespace runner::upload {
namespace {

constexpr const char* kCompleteMarker = ".runner-complete";
constexpr std::string_view kPartialPrefix = ".partial-";
constexpr int64_t kStalePartialSeconds = 3600;
constexpr const char* kLimitsHint =
    " (RUNNER_STORE_MAX_UNPACK_MB and RUNNER_STORE_MAX_ENTRIES raise the "
    "limits)";

// The largest archive worth downloading within the limits: the files, a
// tar header and padding per entry, and the end blocks.
uint64_t max_archive_bytes(const StoreLimits& limits) {
  const uint64_t per_entry = limits.max_entries > (uint64_t{1} << 40)
                                 ? uint64_t{1} << 50
                                 : limits.max_entries * 2048;
  return limits.max_bytes + per_entry + (uint64_t{1} << 20);
}

// The folder `name` in the cache, ours, holding the completion marker (a
// regular file).
bool complete(int cache_fd, const std::string& name) {
  struct stat st {};
  if (::fstatat(cache_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return false;
  const std::string marker = name + "/" + kCompleteMarker;
  return ::fstatat(cache_fd, marker.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(st.st_mode);
}

// The archive of the run, into `fd`, checked against its record.
base::Status download(S3Client& client, const S3Location& location,
                      const format::StoreRecord& record,
                      const StoreLimits& limits, int fd) {
  const std::string where =
      "s3://" + location.bucket + "/" + printable(record.archive_key);
  if (record.archive_bytes > max_archive_bytes(limits))
    return base::Error(where + ": refused an archive of " +
                       std::to_string(record.archive_bytes) +
                       " bytes, more than the limits allow" + kLimitsHint);
  if (auto got = client.get_object(location.bucket, record.archive_key, fd,
                                   record.archive_bytes);
      !got)
    return got.error();
  auto digest = digest_fd(fd);
  if (!digest) return digest.error();
  if (digest->sha256_hex != record.archive_sha256 ||
      digest->size != record.archive_bytes)
    return base::Error(where + ": " + std::to_string(digest->size) +
                       " bytes with another SHA-256 than its record says: "
                       "not used");
  return {};
}

base::Status download_and_unpack(S3Client& client, const S3Location& location,
                                 const StoredRun& run,
                                 const StoreLimits& limits,
                                 const std::string& partial) {
  auto file = base::create_anonymous_temp_file("runner-store-");
  if (!file) return file.error();
  if (auto got = download(client, location, run.record, limits, file->get());
      !got)
    return got;
  if (::lseek(file->get(), 0, SEEK_SET) != 0)
    return base::errno_error("cannot rewind the downloaded archive");
  UnpackLimits unpack_limits;
  unpack_limits.max_total_bytes = limits.max_bytes;
  unpack_limits.max_entries = limits.max_entries;
  unpack_limits.max_ratio = kMaxUnpackRatio;
  unpack_limits.ratio_floor = kRatioFloor;
  auto unpacked = unpack_archive(file->get(), partial, unpack_limits);
  if (!unpacked && unpacked.error().code() == EFBIG)
    return base::Error("s3://" + location.bucket + "/" +
                       printable(run.record.archive_key) + ": " +
                       unpacked.error().message() + kLimitsHint);
  if (!unpacked) return unpacked.error();
  auto marker = base::create_file(partial + "/" + kCompleteMarker, 0600);
  if (!marker) return marker.error();
  return {};
}

// Removes the least recently used runs of the cache until it fits the
// cap (never `keep`), and partial folders a crashed fetch left over an hour
// ago.
void evict(int cache_fd, const StoreLimits& limits, const std::string& keep) {
  std::vector<base::CacheEntry> runs;
  const std::time_t now = std::time(nullptr);
  for (const std::string& name : base::entry_names(cache_fd)) {
    struct stat st {};
    if (::fstatat(cache_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (name.starts_with(kPartialPrefix)) {
      if (now - st.st_mtim.tv_sec > kStalePartialSeconds)
        (void)base::remove_entry(cache_fd, name);
    } else if (S_ISDIR(st.st_mode) && safe_run_id(name)) {
      runs.push_back({name, base::entry_bytes(cache_fd, name), st.st_mtim});
    }
  }
  const uint64_t kept = base::evict_least_recently_used(
      cache_fd, std::move(runs), limits.cache_max_bytes, keep);
  RUNNER_LOG("upload", kDebug) << "store cache: " << kept << " bytes kept";
}

// A number from the environment variable `name`, else `fallback`.
uint64_t setting(const Environment& env, const char* name, uint64_t fallback) {
  const auto text = env_value(env, name);
  if (!text) return fallback;
  const auto value = format::parse_dec(*text);
  if (value && *value <= (uint64_t{1} << 40)) return *value;
  RUNNER_LOG("upload", kWarning) << name << "='" << printable(*text)
                                 << "' is not a number: using " << fallback;
  return fallback;
}

}  // namespace

StoreLimits store_limits_from_environment(const Environment& env) {
  StoreLimits limits;
  limits.max_bytes =
      setting(env, "RUNNER_STORE_MAX_UNPACK_MB", limits.max_bytes >> 20) << 20;
  limits.max_entries =
      setting(env, "RUNNER_STORE_MAX_ENTRIES", limits.max_entries);
  limits.cache_max_bytes =
      setting(env, "RUNNER_STORE_CACHE_MAX_MB", limits.cache_max_bytes >> 20)
      << 20;
  return limits;
}

base::Result<std::string> fetch_run(
    S3Client& client, const S3Location& location, const StoredRun& run,
    const std::string& cache, const StoreLimits& limits, std::ostream& log) {
  const std::string& id = run.record.run_id;
  if (!safe_run_id(id))
    return base::Error(printable(run.record_key) + ": run id '" +
                       printable(id) + "' is not a safe folder name");
  auto cache_fd = base::open_cache_folder(cache);
  if (!cache_fd) return cache_fd.error();
  const std::string target = cache + "/" + id;
  if (complete(cache_fd->get(), id)) {
    base::touch_cache_entry(cache_fd->get(), id);
    evict(cache_fd->get(), limits, id);
    return target;
  }
  std::string partial = cache + "/" + std::string(kPartialPrefix) + "XXXXXX";
  if (::mkdtemp(partial.data()) == nullptr)
    return base::errno_error("cannot create a folder in " + cache);
  const std::string partial_name = partial.substr(cache.size() + 1);
  log << "fetching " << id << " (" << run.record.archive_bytes
      << " bytes) into " << target << "\n";
  if (auto s = download_and_unpack(client, location, run, limits, partial);
      !s) {
    (void)base::remove_entry(cache_fd->get(), partial_name);
    return s.error();
  }
  if (::rename(partial.c_str(), target.c_str()) != 0) {
    const int err = errno;
    (void)base::remove_entry(cache_fd->get(), partial_name);
    if (!complete(cache_fd->get(), id))  // not a concurrent fetch of it
      return base::errno_error("cannot move the run into " + target, err);
  }
  evict(cache_fd->get(), limits, id);
  return target;
}

}  // namespace runner::upload
