// The upload metadata JSON of CodSpeed's upload protocol, version 10
// (docs/upload.md): camelCase members, the
// run-environment members flattened into the top level. Written once here:
// the bytes POSTed are the bytes hashed for a tokenless run. Also the
// service's answer {status, uploadUrl, runId}.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

inline constexpr int kUploadMetadataVersion = 10;

struct UploadRunnerInfo {
  std::string name = "codspeed-runner";
  std::string version;
  std::vector<std::string> instruments;  // none for walltime
  std::string executor = "walltime";
  // system info, flattened into "runner"
  std::string os, os_version, arch, host, user;
  std::string cpu_brand, cpu_name, cpu_vendor_id;
  uint32_t cpu_cores = 0;
  uint64_t total_memory_gb = 0;
  std::vector<std::string> cpu_flags;
};

struct UploadRunPart {
  std::string run_id;
  std::string run_part_id;
  std::string job_name;
  std::map<std::string, std::string> metadata;
};

struct UploadSender {
  std::string id;
  std::string login;
};

// GitHub Actions' part of the metadata ("ghData").
struct UploadGhData {
  std::string run_id;
  std::string job;
};

// GitLab CI's part ("glData").
struct UploadGlData {
  std::string run_id;
  std::string job;
};

// A run outside CI ("localData").
struct UploadLocalData {
  std::string host;  // the machine that ran it
  std::string user;
};

struct UploadMetadata {
  std::string repository_provider;  // "GITHUB", "GITLAB"
  int version = kUploadMetadataVersion;
  bool tokenless = false;
  std::string profile_md5;                      // base64 of the archive's MD5
  std::optional<std::string> profile_encoding;  // "gzip" or null
  UploadRunnerInfo runner;
  std::string run_environment;  // "GITHUB_ACTIONS", "GITLAB_CI", "LOCAL"
  std::optional<UploadRunPart> run_part;
  std::string commit_hash;
  bool allow_empty = false;
  // flattened run-environment metadata
  std::string ref;
  std::optional<std::string> head_ref;
  std::optional<std::string> base_ref;
  std::string owner;
  std::string repository;
  std::string event;  // push, pull_request, workflow_dispatch, schedule, local
  std::optional<UploadSender> sender;
  std::optional<UploadGhData> gh_data;
  std::optional<UploadGlData> gl_data;
  std::optional<UploadLocalData> local_data;
  std::string repository_root_path;
};

// Compact JSON, members in a fixed order.
std::string write_upload_metadata(const UploadMetadata& metadata);
base::Result<UploadMetadata> read_upload_metadata(std::string_view text);

// {"status": ..., "uploadUrl": ..., "runId": ...}; an answer without
// uploadUrl is an error that does not quote the text (it may echo a
// token: the caller quotes it, redacted).
struct UploadAnswer {
  std::string status;
  std::string upload_url;
  std::string run_id;
};
base::Result<UploadAnswer> read_upload_answer(std::string_view text);

// GitHub's OIDC answer {"value": "<JWT>"}: the token.
base::Result<std::string> read_oidc_answer(std::string_view text);

}  // namespace runner::format
