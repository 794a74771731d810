// A run's record in the shared profile store: written and read here only
// (see store_record.hpp).
#include "format/store_record.hpp"

#include <nlohmann/json.hpp>

#include "format/json_checker.hpp"

namespace runner::format {

using Json = nlohmann::ordered_json;

std::string write_store_record(const StoreRecord& r) {
  Json j;
  j["version"] = r.version;
  j["owner"] = r.owner;
  j["repository"] = r.repository;
  j["branch"] = r.branch;
  j["ref"] = r.ref;
  j["commit"] = r.commit;
  j["run_id"] = r.run_id;
  j["created_at"] = r.created_at;
  j["created_unix_ms"] = r.created_unix_ms;
  j["event"] = r.event;
  if (r.pull_request)
    j["pull_request"] = *r.pull_request;
  else
    j["pull_request"] = nullptr;
  j["ci_run_url"] = r.ci_run_url;
  j["archive_key"] = r.archive_key;
  j["archive_bytes"] = r.archive_bytes;
  j["archive_sha256"] = r.archive_sha256;
  j["compression"] = r.compression;
  j["folder_bytes"] = r.folder_bytes;
  j["benchmarks"] = r.benchmarks;
  j["runner_version"] = r.runner_version;
  Json medians = Json::array();
  for (const StoredMedian& m : r.benchmark_medians) {
    Json entry;
    entry["uri"] = m.uri;
    entry["median_ns"] = m.median_ns;  // not finite: null, refused on read
    if (m.low_ns && m.high_ns) {
      entry["low_ns"] = *m.low_ns;
      entry["high_ns"] = *m.high_ns;
    }
    if (m.cpu_ns) entry["cpu_ns"] = *m.cpu_ns;
    if (m.instructions) entry["instructions"] = *m.instructions;
    medians.push_back(std::move(entry));
  }
  j["benchmark_medians"] = std::move(medians);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {

// A member that must be an integer >= 0 (nlohmann's get<uint64_t>() would
// convert 1e30 or -1 with undefined behaviour).
uint64_t unsigned_member(const Json& j, const char* name) {
  const Json& v = j.at(name);
  if (!v.is_number_unsigned())
    throw std::invalid_argument(std::string(name) + " is not an integer >= 0");
  return v.get<uint64_t>();
}

// An optional number member of a benchmark_medians entry.
std::optional<double> optional_number(const Json& entry, const char* name,
                                      const std::string& where) {
  auto it = entry.find(name);
  if (it == entry.end()) return std::nullopt;
  if (!it->is_number())
    throw std::invalid_argument(where + "." + name + " is not a number");
  return it->get<double>();
}

// "benchmark_medians": an array of {"uri": string, "median_ns": number}.
std::vector<StoredMedian> read_medians(const Json& j) {
  std::vector<StoredMedian> out;
  auto it = j.find("benchmark_medians");
  if (it == j.end()) return out;
  if (!it->is_array())
    throw std::invalid_argument("benchmark_medians is not an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& entry = (*it)[i];
    const std::string where = "benchmark_medians[" + std::to_string(i) + "]";
    if (!entry.is_object() || !entry.contains("uri") ||
        !entry["uri"].is_string() || !entry.contains("median_ns") ||
        !entry["median_ns"].is_number())
      throw std::invalid_argument(
          where + " is not {\"uri\": string, \"median_ns\": number}");
    StoredMedian m{entry["uri"].get<std::string>(),
                   entry["median_ns"].get<double>(),
                   {},
                   {},
                   optional_number(entry, "cpu_ns", where),
                   optional_number(entry, "instructions", where)};
    if (entry.contains("low_ns") || entry.contains("high_ns")) {
      if (!entry.contains("low_ns") || !entry["low_ns"].is_number() ||
          !entry.contains("high_ns") || !entry["high_ns"].is_number())
        throw std::invalid_argument(where +
                                    " has not both low_ns and high_ns numbers");
      m.low_ns = entry["low_ns"].get<double>();
      m.high_ns = entry["high_ns"].get<double>();
    }
    out.push_back(std::move(m));
  }
  return out;
}

StoreRecord read_record(const Json& j) {
  StoreRecord r;
  const uint64_t version = unsigned_member(j, "version");
  if (version < 1 || version > kStoreRecordVersion)
    throw std::invalid_argument("version " + std::to_string(version) +
                                " is not supported (this runner reads " +
                                std::to_string(kStoreRecordVersion) + ")");
  r.version = static_cast<int>(version);
  r.owner = j.at("owner").get<std::string>();
  r.repository = j.at("repository").get<std::string>();
  r.branch = j.at("branch").get<std::string>();
  r.ref = j.at("ref").get<std::string>();
  r.commit = j.at("commit").get<std::string>();
  r.run_id = j.at("run_id").get<std::string>();
  r.created_at = j.at("created_at").get<std::string>();
  r.created_unix_ms = unsigned_member(j, "created_unix_ms");
  r.event = j.at("event").get<std::string>();
  if (auto it = j.find("pull_request"); it != j.end() && !it->is_null())
    r.pull_request = unsigned_member(j, "pull_request");
  r.ci_run_url = j.at("ci_run_url").get<std::string>();
  r.archive_key = j.at("archive_key").get<std::string>();
  r.archive_bytes = unsigned_member(j, "archive_bytes");
  r.archive_sha256 = j.at("archive_sha256").get<std::string>();
  r.compression = j.at("compression").get<std::string>();
  r.folder_bytes = unsigned_member(j, "folder_bytes");
  r.benchmarks = j.at("benchmarks").get<std::vector<std::string>>();
  r.runner_version = j.at("runner_version").get<std::string>();
  r.benchmark_medians = read_medians(j);
  return r;
}

}  // namespace

base::Result<StoreRecord> read_store_record(std::string_view text) {
  auto document = parse_json_document<Json>(text);
  if (!document) return base::Error("store record: " + document.error().what());
  try {
    return read_record(*document);
  } catch (const std::exception& e) {
    return base::Error(std::string("store record: ") + e.what());
  }
}

}  // namespace runner::format
