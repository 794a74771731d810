// CodSpeed's upload protocol (docs/upload.md):
// the folder packed as tar, the metadata JSON (version 10) POSTed with the
// token, then the archive PUT to the returned URL, streamed from disk.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"
#include "upload/archive.hpp"
#include "upload/environment.hpp"
#include "upload/http.hpp"

namespace runner::upload {

inline constexpr const char* kDefaultUploadUrl =
    "https://api.codspeed.io/upload";

struct CodspeedUploadOptions {
  std::string folder;
  std::string upload_url = kDefaultUploadUrl;
  // --token, else CODSPEED_TOKEN; without either, GitHub OIDC when
  // ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN are set, else tokenless.
  std::optional<std::string> token;
  RetryPolicy retry;
};

struct CodspeedUploadResult {
  std::string run_id;    // from the service's answer
  std::string run_hash;  // tokenless only: SHA-256 of the metadata JSON
  bool tokenless = false;
  UploadCost cost;  // packing and both requests
};

// The service's answer to the metadata POST: a status other than 2xx is an
// error quoting the start of the body; a 2xx that is not the expected
// JSON, or whose upload URL is not http(s), is an error quoting it; the
// run id and status are returned printable. Every quoted text has
// `secrets` redacted before it is cut, and is made printable
// (server_text).
base::Result<format::UploadAnswer> read_service_answer(
    const HttpResponse& response, const std::vector<std::string>& secrets);

// Packs, POSTs, PUTs. Progress and retries go to `log`; the token is never
// written anywhere but the Authorization header. Errors: a 4xx other than
// 408/429 fails at once with the status and the start of the body; a
// transient failure after the last retry names the step and the cause.
base::Result<CodspeedUploadResult> upload_to_codspeed(
    const CodspeedUploadOptions& options, const RunFacts& facts,
    const Environment& env, std::ostream& log);

}  // namespace runner::upload
