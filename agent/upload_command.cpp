#include "agent/upload_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "agent/commands.hpp"
#include "base/base.hpp"
#include "report/report.hpp"
#include "upload/upload.hpp"

namespace runner::agent {
namespace {

std::string size_text(uint64_t bytes) {
  char text[32];
  if (bytes >= (1u << 20))
    std::snprintf(text, sizeof(text), "%.1f MiB", bytes / 1048576.0);
  else
    std::snprintf(text, sizeof(text), "%.1f KiB", bytes / 1024.0);
  return text;
}

std::string current_directory() {
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  return ec ? std::string(".") : cwd.string();
}

// What the folder went to, and the archive against the folder.
void print_summary(const char* where, const std::string& id,
                   const upload::UploadCost& cost) {
  const uint64_t archive = cost.archive_bytes, folder = cost.folder_bytes;
  const double seconds = cost.seconds;
  std::fprintf(
      stderr,
      "runner upload: %s %s: archive %s for a %s folder (%.0f%%) in %.2f s\n",
      where, id.c_str(), size_text(archive).c_str(), size_text(folder).c_str(),
      folder > 0 ? 100.0 * archive / folder : 0.0, seconds);
}

base::Result<upload::S3Client> store_client(
    const upload::Environment& env, const std::optional<std::string>& endpoint,
    uint64_t multipart_threshold) {
  auto config = upload::s3_config_from_environment(env, endpoint);
  if (!config) return config.error();
  config->multipart_threshold = multipart_threshold;
  return upload::S3Client::create(std::move(*config), std::cerr);
}

// The counts of the record (compare::run_counts): what the folder's
// runner.counters.json says of each benchmark.
upload::RunCountsByUri counts_by_uri(const std::string& folder) {
  upload::RunCountsByUri out;
  for (const compare::RunCounts& c : compare::run_counts(folder)) {
    if (c.cpu_ns_per_iter) out.cpu_ns[c.uri] = *c.cpu_ns_per_iter;
    if (c.instructions_per_iter)
      out.instructions[c.uri] = *c.instructions_per_iter;
  }
  return out;
}

base::Status to_store(const UploadOptions& options,
                      const upload::RunFacts& facts,
                      const upload::Environment& env) {
  auto location = upload::parse_s3_url(*options.store);
  if (!location) return location.error();
  auto client =
      store_client(env, options.s3_endpoint, options.multipart_threshold);
  if (!client) return client.error();
  auto stored = upload::store_upload(*client, *location, options.folder, facts,
                                     std::cerr, counts_by_uri(options.folder));
  if (!stored) return stored.error();
  print_summary(("stored in s3://" + location->bucket + "/" +
                 stored->run.record.archive_key + " as run")
                    .c_str(),
                stored->run.record.run_id, stored->cost);
  return {};
}

base::Status to_codspeed(const UploadOptions& options,
                         const upload::RunFacts& facts,
                         const upload::Environment& env) {
  upload::CodspeedUploadOptions codspeed;
  codspeed.folder = options.folder;
  codspeed.upload_url =
      options.upload_url.value_or(upload::env_value(env, "CODSPEED_UPLOAD_URL")
                                      .value_or(upload::kDefaultUploadUrl));
  codspeed.token = options.token;
  codspeed.retry = upload::retry_policy_from_environment();
  auto result = upload::upload_to_codspeed(codspeed, facts, env, std::cerr);
  if (!result) return result.error();
  if (result->tokenless)
    std::printf("Run hash: %s\n", result->run_hash.c_str());
  print_summary("uploaded run",
                result->run_id.empty() ? "(no id)" : result->run_id,
                result->cost);
  return {};
}

base::Status upload_folder(const UploadOptions& options) {
  const upload::Environment env = upload::current_environment();
  auto facts = upload::collect_run_facts(current_directory(), env);
  if (!facts) return facts.error();
  return options.store ? to_store(options, *facts, env)
                       : to_codspeed(options, *facts, env);
}

}  // namespace

int upload_command(UploadOptions options) {
  if (options.folder.empty()) {
    auto newest = report::find_newest_profile_folder(".");
    if (!newest) {
      std::fprintf(stderr, "runner upload: %s\n",
                   newest.error().what().c_str());
      return 2;
    }
    options.folder = *newest;
  }
  struct stat st {};
  if (::stat(options.folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "runner upload: %s: not a folder\n",
                 options.folder.c_str());
    return 2;
  }
  if (auto s = upload_folder(options); !s) {
    std::fprintf(stderr, "runner upload: %s\n", s.error().what().c_str());
    return 1;
  }
  return 0;
}

int upload_after_run(UploadOptions options, const std::string& folder) {
  options.folder = folder;
  if (auto s = upload_folder(options); !s) {
    std::fprintf(stderr,
                 "runner: the upload failed (the profile folder %s is kept): "
                 "%s\n",
                 folder.c_str(), s.error().what().c_str());
    return kUploadFailedExit;
  }
  return 0;
}

int compare_with_store(compare::CompareOptions options,
                       const std::string& store,
                       const std::optional<std::string>& s3_endpoint) {
  upload::StoreBaseQuery query;
  query.store = store;
  query.s3_endpoint = s3_endpoint;
  if (!options.base.empty()) query.branch = options.base.front();
  query.checkout = current_directory();
  auto base = upload::fetch_store_base(
      query, upload::current_environment(), std::cerr,
      [](const std::string& description) {
        std::fprintf(stderr, "runner compare: base: %s\n", description.c_str());
      });
  if (!base) {
    std::fprintf(stderr, "runner compare: %s\n", base.error().what().c_str());
    return 2;
  }
  options.base = {base->folder};
  options.history_medians_ns = std::move(base->history.medians_ns);
  options.history_description = base->history_description;
  return compare_command(options);
}

}  // namespace runner::agent
