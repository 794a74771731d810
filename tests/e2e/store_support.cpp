// What the store's end-to-end tests share (see store_support.hpp).
#include "tests/e2e/store_support.hpp"

#include <chrono>
#include <iostream>

#include <doctest/doctest.h>

#include "tests/support/github_job.hpp"

namespace runner::testing {

std::vector<std::string> store_job_env(const S3rver& server, const TempDir& dir,
                                       bool pull_request,
                                       const std::string& commit) {
  std::vector<std::string> env = server.environment();
  for (std::string& e : github_job_env(pull_request, "")) {
    if (!commit.empty() && e.starts_with("GITHUB_SHA="))
      e = "GITHUB_SHA=" + commit;
    env.push_back(std::move(e));
  }
  env.push_back("XDG_CACHE_HOME=" + dir.file("cache"));
  env.push_back("RUNNER_HTTP_RETRY_DELAY_MS=5");
  return env;
}

upload::S3Client store_client(const std::string& endpoint) {
  auto config = upload::s3_config_from_environment(
      {{"AWS_ACCESS_KEY_ID", "S3RVER"}, {"AWS_SECRET_ACCESS_KEY", "S3RVER"}},
      endpoint);
  REQUIRE(config);
  config->retry.base_delay = std::chrono::milliseconds(5);
  auto client = upload::S3Client::create(std::move(*config), std::cerr);
  REQUIRE(client);
  return std::move(*client);
}

std::string plant_run(upload::S3Client& client, const std::string& folder,
                      const std::string& id,
                      const std::function<void(format::StoreRecord&)>& change) {
  auto archive = upload::pack_folder(folder, upload::ArchiveCompression::kZstd);
  REQUIRE(archive);
  auto digest = upload::digest_fd(archive->fd.get());
  REQUIRE(digest);
  format::StoreRecord r;
  r.owner = "acme";
  r.repository = "widgets";
  r.branch = "main";
  r.ref = "refs/heads/main";
  r.commit = std::string(40, 'd');
  r.run_id = id;
  r.created_at = "2099-01-01T00:00:00.000Z";
  r.event = "push";
  r.archive_key = "ci/acme/widgets/runs/" + r.commit + "/" + id + ".tar.zst";
  r.archive_bytes = archive->size;
  r.archive_sha256 = digest->sha256_hex;
  r.folder_bytes = archive->folder_bytes;
  r.runner_version = "planted";
  change(r);
  REQUIRE(client.put_object("bench", r.archive_key, archive->fd.get(),
                            archive->size, "application/zstd"));
  const std::string key = "ci/acme/widgets/refs/main/" + id + ".json";
  REQUIRE(client.put_text("bench", key, format::write_store_record(r),
                          "application/json"));
  return key;
}

}  // namespace runner::testing
