// CodSpeed's upload protocol (see codspeed.hpp).
#include "upload/codspeed.hpp"

#include <cctype>
#include <chrono>

#include "base/base.hpp"
#include "config.h"
#include "format/format.hpp"
#include "upload/archive.hpp"
#include "upload/digest.hpp"

namespace runner::upload {
namespace {

constexpr const char* kOidcAudience = "codspeed.io";
// The JSON answers of the service and of GitHub are a few hundred bytes.
constexpr uint64_t kMaxAnswerBytes = 1u << 20;

// The archive PUT may take 2 minutes plus what 256 KiB/s needs.
std::chrono::milliseconds put_timeout(uint64_t bytes) {
  return std::chrono::milliseconds(120000 + bytes / 262144 * 1000);
}

// GitHub's OIDC id token (audience codspeed.io, docs/upload.md); std::nullopt
// when the job has no id-token permission.
base::Result<std::optional<std::string>> oidc_token(HttpClient& http,
                                                    const Environment& env,
                                                    const RetryPolicy& retry,
                                                    std::ostream& log) {
  auto url = env_value(env, "ACTIONS_ID_TOKEN_REQUEST_URL");
  auto bearer = env_value(env, "ACTIONS_ID_TOKEN_REQUEST_TOKEN");
  if (!url || !bearer) return std::optional<std::string>();
  HttpRequest request;
  request.url = *url + "&audience=" + percent_encode(kOidcAudience);
  request.headers = {"Authorization: Bearer " + *bearer};
  request.secrets = {*bearer};
  request.timeout = std::chrono::seconds(60);
  request.max_response_bytes = kMaxAnswerBytes;
  auto response = perform_with_retries(http, request, retry, "OIDC token", log);
  if (!response)
    return base::Error(
        "GitHub OIDC token request: " + response.error().message(),
        response.error().code());
  if (response->status != 200)
    return base::Error("GitHub OIDC token request: " +
                       describe_status(*response, request.secrets));
  auto token = format::read_oidc_answer(response->body);
  if (!token) return token.error();
  return std::optional<std::string>(*token);
}

format::UploadRunnerInfo runner_info(const MachineFacts& m) {
  format::UploadRunnerInfo r;
  r.version = RUNNER_VERSION;
  r.os = m.os;
  r.os_version = m.os_version;
  r.arch = m.arch;
  r.host = m.host;
  r.user = m.user;
  r.cpu_brand = m.cpu_brand;
  r.cpu_name = m.cpu_name;
  r.cpu_vendor_id = m.cpu_vendor_id;
  r.cpu_cores = m.cpu_cores;
  r.total_memory_gb = m.total_memory_gb;
  r.cpu_flags = m.cpu_flags;
  return r;
}

void ci_members(const RunFacts& facts, format::UploadMetadata& m) {
  if (facts.provider == CiProvider::kGitHubActions)
    m.gh_data = format::UploadGhData{facts.run_id, facts.job};
  if (facts.provider == CiProvider::kGitLabCi)
    m.gl_data = format::UploadGlData{facts.run_id, facts.job};
  if (facts.provider == CiProvider::kLocal)
    m.local_data =
        format::UploadLocalData{facts.machine.host, facts.machine.user};
  if (facts.provider != CiProvider::kLocal)
    m.run_part = format::UploadRunPart{
        facts.run_id, facts.job + "-walltime", facts.job, {}};
  if (facts.sender)
    m.sender = format::UploadSender{facts.sender_id, *facts.sender};
}

format::UploadMetadata metadata_of(const RunFacts& facts,
                                   const std::string& md5, bool tokenless) {
  format::UploadMetadata m;
  m.repository_provider =
      facts.provider == CiProvider::kGitLabCi ? "GITLAB" : "GITHUB";
  m.tokenless = tokenless;
  m.profile_md5 = md5;
  m.runner = runner_info(facts.machine);
  m.run_environment = provider_name(facts.provider);
  m.commit_hash = facts.commit;
  m.ref = facts.ref;
  m.head_ref = facts.head_ref;
  m.base_ref = facts.base_ref;
  m.owner = facts.owner;
  m.repository = facts.repository;
  m.event = facts.event;
  m.repository_root_path = facts.repository_root;
  if (!m.repository_root_path.empty() && m.repository_root_path.back() != '/')
    m.repository_root_path += '/';
  ci_members(facts, m);
  return m;
}

// POST of the metadata: the service's answer.
base::Result<format::UploadAnswer> post_metadata(
    HttpClient& http, const CodspeedUploadOptions& options,
    const std::string& metadata, const std::optional<std::string>& token,
    std::ostream& log) {
  HttpRequest request;
  request.method = "POST";
  request.url = options.upload_url;
  request.headers = {"Content-Type: application/json"};
  if (token) request.headers.push_back("Authorization: " + *token);
  request.secrets = {token.value_or("")};
  request.body = metadata;
  request.timeout = std::chrono::seconds(120);
  request.max_response_bytes = kMaxAnswerBytes;
  auto response = perform_with_retries(http, request, options.retry,
                                       "upload metadata", log);
  if (!response)
    return base::Error("upload metadata to " + options.upload_url + ": " +
                           response.error().message(),
                       response.error().code());
  return read_service_answer(*response, request.secrets);
}

base::Status put_archive(HttpClient& http, const CodspeedUploadOptions& options,
                         const std::string& url, const PackedArchive& archive,
                         const std::string& md5,
                         const std::optional<std::string>& token,
                         std::ostream& log) {
  HttpRequest request;
  request.method = "PUT";
  request.url = url;
  request.headers = {"Content-Type: application/x-tar", "Content-MD5: " + md5};
  request.secrets = {token.value_or("")};
  request.body_fd = archive.fd.get();
  request.body_size = archive.size;
  request.timeout = put_timeout(archive.size);
  request.max_response_bytes = kMaxAnswerBytes;
  auto response =
      perform_with_retries(http, request, options.retry, "archive upload", log);
  if (!response)
    return base::Error("archive upload: " + response.error().message(),
                       response.error().code());
  if (response->status < 200 || response->status >= 300)
    return base::Error("the archive upload was refused: " +
                       describe_status(*response, request.secrets));
  return {};
}

}  // namespace

base::Result<format::UploadAnswer> read_service_answer(
    const HttpResponse& response, const std::vector<std::string>& secrets) {
  if (response.status < 200 || response.status >= 300)
    return base::Error("the upload service refused the run: " +
                       describe_status(response, secrets));
  auto answer = format::read_upload_answer(response.body);
  if (!answer)
    return base::Error(answer.error().message() + " (HTTP " +
                       std::to_string(response.status) +
                       "): " + server_text(response.body, secrets));
  if (answer->upload_url.rfind("https://", 0) != 0 &&
      answer->upload_url.rfind("http://", 0) != 0)
    return base::Error(
        "unexpected answer of the upload service: the upload URL '" +
        server_text(answer->upload_url, secrets, 200) +
        "' is not http:// or https://");
  answer->run_id = server_text(answer->run_id, secrets, 200);
  answer->status = server_text(answer->status, secrets, 200);
  return answer;
}

base::Result<CodspeedUploadResult> upload_to_codspeed(
    const CodspeedUploadOptions& options, const RunFacts& facts,
    const Environment& env, std::ostream& log) {
  const uint64_t start = base::monotonic_ns();
  auto http = HttpClient::create();
  if (!http) return http.error();
  std::optional<std::string> token = options.token;
  if (!token) token = env_value(env, "CODSPEED_TOKEN");
  if (!token) {
    auto oidc = oidc_token(*http, env, options.retry, log);
    if (!oidc) return oidc.error();
    token = *oidc;
  }
  auto archive = pack_folder(options.folder, ArchiveCompression::kNone);
  if (!archive) return archive.error();
  auto digest = digest_fd(archive->fd.get());
  if (!digest) return digest.error();
  CodspeedUploadResult result;
  result.tokenless = !token.has_value();
  const std::string metadata = format::write_upload_metadata(
      metadata_of(facts, digest->md5_base64, result.tokenless));
  if (result.tokenless) result.run_hash = sha256_hex(metadata);
  auto answer = post_metadata(*http, options, metadata, token, log);
  if (!answer) return answer.error();
  if (auto put = put_archive(*http, options, answer->upload_url, *archive,
                             digest->md5_base64, token, log);
      !put)
    return put.error();
  result.run_id = answer->run_id;
  result.cost = upload_cost(*archive, start);
  return result;
}

}  // namespace runner::upload
