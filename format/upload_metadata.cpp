// CodSpeed's upload metadata JSON (version 10) and the service's answer:
// written and read here only (see upload_metadata.hpp).
#include "format/upload_metadata.hpp"

#include <nlohmann/json.hpp>

namespace runner::format {
namespace {

using Json = nlohmann::ordered_json;

Json optional_text(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json runner_json(const UploadRunnerInfo& r) {
  return Json{{"name", r.name},
              {"version", r.version},
              {"instruments", r.instruments},
              {"executor", r.executor},
              {"os", r.os},
              {"osVersion", r.os_version},
              {"arch", r.arch},
              {"host", r.host},
              {"user", r.user},
              {"cpuBrand", r.cpu_brand},
              {"cpuName", r.cpu_name},
              {"cpuVendorId", r.cpu_vendor_id},
              {"cpuCores", r.cpu_cores},
              {"totalMemoryGb", r.total_memory_gb},
              {"cpuFlags", r.cpu_flags}};
}

Json run_part_json(const std::optional<UploadRunPart>& part) {
  if (!part) return nullptr;
  Json metadata = Json::object();
  for (const auto& [key, value] : part->metadata) metadata[key] = value;
  return Json{{"runId", part->run_id},
              {"runPartId", part->run_part_id},
              {"jobName", part->job_name},
              {"metadata", metadata}};
}

template <typename T>
Json ci_data_json(const std::optional<T>& data) {
  if (!data) return nullptr;
  return Json{{"runId", data->run_id}, {"job", data->job}};
}

}  // namespace

std::string write_upload_metadata(const UploadMetadata& m) {
  Json j;
  j["repositoryProvider"] = m.repository_provider;
  j["version"] = m.version;
  j["tokenless"] = m.tokenless;
  j["profileMd5"] = m.profile_md5;
  j["profileEncoding"] = optional_text(m.profile_encoding);
  j["runner"] = runner_json(m.runner);
  j["runEnvironment"] = m.run_environment;
  j["runPart"] = run_part_json(m.run_part);
  j["commitHash"] = m.commit_hash;
  j["allowEmpty"] = m.allow_empty;
  j["ref"] = m.ref;
  j["headRef"] = optional_text(m.head_ref);
  j["baseRef"] = optional_text(m.base_ref);
  j["owner"] = m.owner;
  j["repository"] = m.repository;
  j["event"] = m.event;
  j["sender"] = m.sender
                    ? Json{{"id", m.sender->id}, {"login", m.sender->login}}
                    : Json(nullptr);
  j["ghData"] = ci_data_json(m.gh_data);
  j["glData"] = ci_data_json(m.gl_data);
  j["localData"] = m.local_data ? Json{{"host", m.local_data->host},
                                       {"user", m.local_data->user}}
                                : Json(nullptr);
  j["repositoryRootPath"] = m.repository_root_path;
  return j.dump();
}

namespace {

std::optional<std::string> read_optional_text(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<std::string>();
}

UploadRunnerInfo read_runner(const Json& r) {
  UploadRunnerInfo out;
  out.name = r.at("name").get<std::string>();
  out.version = r.at("version").get<std::string>();
  out.instruments = r.at("instruments").get<std::vector<std::string>>();
  out.executor = r.at("executor").get<std::string>();
  out.os = r.at("os").get<std::string>();
  out.os_version = r.at("osVersion").get<std::string>();
  out.arch = r.at("arch").get<std::string>();
  out.host = r.at("host").get<std::string>();
  out.user = r.at("user").get<std::string>();
  out.cpu_brand = r.at("cpuBrand").get<std::string>();
  out.cpu_name = r.at("cpuName").get<std::string>();
  out.cpu_vendor_id = r.at("cpuVendorId").get<std::string>();
  out.cpu_cores = r.at("cpuCores").get<uint32_t>();
  out.total_memory_gb = r.at("totalMemoryGb").get<uint64_t>();
  out.cpu_flags = r.at("cpuFlags").get<std::vector<std::string>>();
  return out;
}

template <typename T>
std::optional<T> read_ci_data(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return T{j.at(key).at("runId").get<std::string>(),
           j.at(key).at("job").get<std::string>()};
}

void read_environment_members(const Json& j, UploadMetadata& m) {
  m.ref = j.at("ref").get<std::string>();
  m.head_ref = read_optional_text(j, "headRef");
  m.base_ref = read_optional_text(j, "baseRef");
  m.owner = j.at("owner").get<std::string>();
  m.repository = j.at("repository").get<std::string>();
  m.event = j.at("event").get<std::string>();
  if (j.contains("sender") && !j.at("sender").is_null())
    m.sender = UploadSender{j.at("sender").at("id").get<std::string>(),
                            j.at("sender").at("login").get<std::string>()};
  m.gh_data = read_ci_data<UploadGhData>(j, "ghData");
  m.gl_data = read_ci_data<UploadGlData>(j, "glData");
  if (j.contains("localData") && !j.at("localData").is_null())
    m.local_data =
        UploadLocalData{j.at("localData").at("host").get<std::string>(),
                        j.at("localData").at("user").get<std::string>()};
  m.repository_root_path = j.at("repositoryRootPath").get<std::string>();
}

UploadMetadata read_metadata(const Json& j) {
  UploadMetadata m;
  m.repository_provider = j.at("repositoryProvider").get<std::string>();
  m.version = j.at("version").get<int>();
  m.tokenless = j.at("tokenless").get<bool>();
  m.profile_md5 = j.at("profileMd5").get<std::string>();
  m.profile_encoding = read_optional_text(j, "profileEncoding");
  m.runner = read_runner(j.at("runner"));
  m.run_environment = j.at("runEnvironment").get<std::string>();
  if (j.contains("runPart") && !j.at("runPart").is_null()) {
    const Json& p = j.at("runPart");
    UploadRunPart part{p.at("runId").get<std::string>(),
                       p.at("runPartId").get<std::string>(),
                       p.at("jobName").get<std::string>(),
                       {}};
    for (const auto& [key, value] : p.at("metadata").items())
      part.metadata[key] = value.get<std::string>();
    m.run_part = std::move(part);
  }
  m.commit_hash = j.at("commitHash").get<std::string>();
  m.allow_empty = j.at("allowEmpty").get<bool>();
  read_environment_members(j, m);
  return m;
}

}  // namespace

base::Result<UploadMetadata> read_upload_metadata(std::string_view text) {
  try {
    return read_metadata(Json::parse(text));
  } catch (const Json::exception& e) {
    return base::Error(std::string("upload metadata: ") + e.what());
  }
}

base::Result<UploadAnswer> read_upload_answer(std::string_view text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded())
    return base::Error("unexpected answer of the upload service: not JSON");
  if (!j.is_object() || !j.contains("uploadUrl") ||
      !j.at("uploadUrl").is_string())
    return base::Error(
        "unexpected answer of the upload service: no \"uploadUrl\" string");
  UploadAnswer out;
  out.upload_url = j.at("uploadUrl").get<std::string>();
  if (j.contains("status") && j.at("status").is_string())
    out.status = j.at("status").get<std::string>();
  if (j.contains("runId") && j.at("runId").is_string())
    out.run_id = j.at("runId").get<std::string>();
  return out;
}

base::Result<std::string> read_oidc_answer(std::string_view text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("value") && j.at("value").is_string() &&
      !j.at("value").get<std::string>().empty())
    return j.at("value").get<std::string>();
  return base::Error("GitHub OIDC answer without a token (\"value\")");
}

}  // namespace runner::format
