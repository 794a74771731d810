// What the store's end-to-end tests share (store_test.cpp, history_test.cpp):
// the environment of a GitHub job that uses s3rver as its store, a client
// of s3rver, and a run planted in it as someone with write access could.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "tests/support/s3rver.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

namespace runner::testing {

// A GitHub Actions job of acme/widgets (tests/support/github_job.hpp)
// with the store's settings: s3rver's endpoint and keys, the caches under
// dir, HTTP retries 5 ms apart; `commit` (when given) as its GITHUB_SHA.
std::vector<std::string> store_job_env(const S3rver& server, const TempDir& dir,
                                       bool pull_request,
                                       const std::string& commit = "");

// A client of the store at `endpoint` with s3rver's keys.
upload::S3Client store_client(const std::string& endpoint);

// `folder` packed as the store packs it, and the record of a push to main
// naming it (run id `id`), as an attacker with write access to the store
// could put them; `change` edits the record. Returns the record's key.
std::string plant_run(
    upload::S3Client& client, const std::string& folder, const std::string& id,
    const std::function<void(format::StoreRecord&)>& change =
        [](format::StoreRecord&) {});

}  // namespace runner::testing
