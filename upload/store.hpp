// The shared profile store on S3. Layout under s3://BUCKET/PREFIX/:
//   <owner>/<repository>/runs/<commit>/<run id>.tar.zst   the folder
//   <owner>/<repository>/refs/<ref key>/<time>-<run id>.json   its record
// (format::StoreRecord). A record is written after its archive, one object
// per run, so concurrent jobs never overwrite each other and a run is
// findable only once complete. <ref key> is the branch with every byte
// outside [A-Za-z0-9._-] written as ~XX; <time> is UTC
// YYYYMMDDTHHMMSSmmmZ, so the newest record sorts last.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "base/result.hpp"
#include "format/format.hpp"
#include "upload/archive.hpp"
#include "upload/environment.hpp"
#include "upload/s3.hpp"

namespace runner::upload {

struct StoredRun {
  format::StoreRecord record;
  std::string record_key;
};

struct StoreUploadResult {
  StoredRun run;
  UploadCost cost;
};

// Packs `folder` (tar + zstd), uploads the archive, then the record.
base::Result<StoreUploadResult> store_upload(S3Client& client,
                                             const S3Location& location,
                                             const std::string& folder,
                                             const RunFacts& facts,
                                             std::ostream& log);

// The newest complete run of `branch` of the facts' repository; an error
// with code ENOENT when there is none (the message names the prefix).
base::Result<StoredRun> find_newest_run(S3Client& client,
                                        const S3Location& location,
                                        const RunFacts& facts,
                                        const std::string& branch);

// Downloads and unpacks the run into <cache>/<run id>/ (reused when already
// complete there); returns that folder.
base::Result<std::string> fetch_run(S3Client& client,
                                    const S3Location& location,
                                    const StoredRun& run,
                                    const std::string& cache,
                                    std::ostream& log);

// $XDG_CACHE_HOME/runner/store, else $HOME/.cache/runner/store.
std::string default_store_cache(const Environment& env);

// The <ref key> of a branch name.
std::string ref_key(const std::string& branch);

}  // namespace runner::upload
