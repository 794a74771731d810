// `runner upload`, the upload at the end of `runner run/exec --upload` or
// `--store`, and the base of `runner compare --store`: the agent's side of
// upload/ (which does the work), turning options into calls and results
// into one-line reports and exit codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compare/compare.hpp"

namespace runner::agent {

// The exit code of a run whose benchmark succeeded but whose upload failed
// (the profile folder is kept).
inline constexpr int kUploadFailedExit = 3;

struct UploadOptions {
  std::string folder;     // runner upload: empty = the newest in "."
  bool codspeed = false;  // run/exec --upload
  std::optional<std::string> upload_url;  // else CODSPEED_UPLOAD_URL
  std::optional<std::string> token;       // else CODSPEED_TOKEN
  std::optional<std::string> store;       // s3://BUCKET[/PREFIX]
  std::optional<std::string> s3_endpoint;
  uint64_t multipart_threshold = 64ull << 20;
  bool requested() const { return codspeed || store.has_value(); }
};

// runner upload: 0 uploaded, 1 the upload failed, 2 bad input.
int upload_command(UploadOptions options);

// After a run: 0 uploaded, kUploadFailedExit otherwise (one line on
// stderr).
int upload_after_run(UploadOptions options, const std::string& folder);

// runner compare --store URL [--base BRANCH] HEAD: the newest stored run of
// BRANCH fetched into the cache becomes the base.
int compare_with_store(compare::CompareOptions options,
                       const std::string& store,
                       const std::optional<std::string>& s3_endpoint);

}  // namespace runner::agent
