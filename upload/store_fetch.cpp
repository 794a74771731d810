// A stored run, downloaded and unpacked into the local cache (see
// store.hpp): into a private partial folder first, checked against the
// record's SHA-256, then renamed into place, so that a folder in the cache
// is either complete or absent.
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "base/base.hpp"
#include "upload/archive.hpp"
#include "upload/digest.hpp"
#include "upload/store.hpp"

namespace runner::upload {
namespace {

constexpr const char* kCompleteMarker = ".runner-complete";

bool safe_run_id(const std::string& id) {
  return !id.empty() && id.size() <= 128 && id[0] != '.' &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                  c == '_' || c == '.';
         });
}

// A folder of ours holding the completion marker (a regular file).
bool complete(const std::string& folder) {
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid())
    return false;
  const std::string marker = folder + "/" + kCompleteMarker;
  return ::lstat(marker.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void remove_folder(const std::string& folder) {
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);  // never follows symlinks
}

base::Status download_and_unpack(S3Client& client, const S3Location& location,
                                 const StoredRun& run,
                                 const std::string& partial) {
  const auto& record = run.record;
  auto file = base::create_anonymous_temp_file("runner-store-");
  if (!file) return file.error();
  if (auto got =
          client.get_object(location.bucket, record.archive_key, file->get());
      !got)
    return got.error();
  auto digest = digest_fd(file->get());
  if (!digest) return digest.error();
  if (digest->sha256_hex != record.archive_sha256 ||
      digest->size != record.archive_bytes)
    return base::Error("s3://" + location.bucket + "/" + record.archive_key +
                       ": " + std::to_string(digest->size) +
                       " bytes with another SHA-256 than its record says: "
                       "not used");
  if (::lseek(file->get(), 0, SEEK_SET) != 0)
    return base::errno_error("cannot rewind the downloaded archive");
  UnpackLimits limits;
  limits.max_total_bytes =
      std::max<uint64_t>(record.folder_bytes, 1) * 2 + (64u << 20);
  auto unpacked = unpack_archive(file->get(), partial, limits);
  if (!unpacked) return unpacked.error();
  auto marker = base::create_file(partial + "/" + kCompleteMarker, 0600);
  if (!marker) return marker.error();
  return {};
}

}  // namespace

base::Result<std::string> fetch_run(S3Client& client,
                                    const S3Location& location,
                                    const StoredRun& run,
                                    const std::string& cache,
                                    std::ostream& log) {
  if (!safe_run_id(run.record.run_id))
    return base::Error(run.record_key + ": run id '" + run.record.run_id +
                       "' is not a safe folder name");
  if (auto s = base::prepare_private_directory(cache); !s) return s.error();
  const std::string target = cache + "/" + run.record.run_id;
  if (complete(target)) return target;
  std::string partial = cache + "/.partial-XXXXXX";
  if (::mkdtemp(partial.data()) == nullptr)
    return base::errno_error("cannot create a folder in " + cache);
  log << "fetching " << run.record.run_id << " (" << run.record.archive_bytes
      << " bytes) into " << target << "\n";
  if (auto s = download_and_unpack(client, location, run, partial); !s) {
    remove_folder(partial);
    return s.error();
  }
  if (::rename(partial.c_str(), target.c_str()) != 0) {
    const int err = errno;
    remove_folder(partial);
    if (!complete(target))  // not a concurrent fetch of the same run
      return base::errno_error("cannot move the run into " + target, err);
  }
  return target;
}

}  // namespace runner::upload
