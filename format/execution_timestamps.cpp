#include "format/execution_timestamps.hpp"

#include <msgpack.hpp>

#include "format/profile_layout.hpp"
#include "format/timestamps_json.hpp"

namespace runner::format {
namespace {

// The kind of a marker {"<kind>": timestamp}, or "" when it has another
// shape.
std::string marker_kind(const nlohmann::json& marker, uint64_t* ts) {
  if (!marker.is_object() || marker.size() != 1) return "";
  auto it = marker.begin();
  if (!it.value().is_number_integer()) return "";
  *ts = json_u64(it.value());
  return it.key();
}

}  // namespace

std::string write_execution_timestamps(const ExecutionTimestamps& timestamps) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(&buffer);
  pk.pack_map(2);
  pk.pack(std::string("uri_by_ts"));
  pk.pack_array(static_cast<uint32_t>(timestamps.uri_by_ts.size()));
  for (const auto& [ts, uri] : timestamps.uri_by_ts) {
    pk.pack_array(2);
    pk.pack(ts);
    pk.pack(uri);
  }
  pk.pack(std::string("markers"));
  pk.pack_array(static_cast<uint32_t>(timestamps.markers.size()));
  for (const Marker& m : timestamps.markers) {
    pk.pack_map(1);
    pk.pack(m.kind);
    pk.pack(m.timestamp);
  }
  return std::string(buffer.data(), buffer.size());
}

ExecutionTimestamps timestamps_from_json(const nlohmann::json& object,
                                         JsonChecker& check) {
  ExecutionTimestamps out;
  using Type = nlohmann::json::value_t;
  if (const auto* list = check.member(object, "uri_by_ts", Type::array)) {
    for (size_t i = 0; i < list->size(); ++i) {
      const auto& e = (*list)[i];
      if (e.is_array() && e.size() == 2 && e[0].is_number_integer() &&
          e[1].is_string())
        out.uri_by_ts.emplace_back(json_u64(e[0]), e[1].get<std::string>());
      else
        check.problem("uri_by_ts[" + std::to_string(i) + "]",
                      "expected [timestamp, uri]");
    }
  }
  if (const auto* list = check.member(object, "markers", Type::array)) {
    for (size_t i = 0; i < list->size(); ++i) {
      Marker marker;
      marker.kind = marker_kind((*list)[i], &marker.timestamp);
      if (marker.kind.empty())
        check.problem("markers[" + std::to_string(i) + "]",
                      "expected {\"<marker>\": timestamp}");
      else
        out.markers.push_back(std::move(marker));
    }
  }
  return out;
}

base::Result<std::optional<ExecutionTimestamps>> read_execution_timestamps(
    std::string_view bytes, std::vector<std::string>& warnings) {
  const std::string file(ProfileLayout::kExecutionTimestamps);
  auto doc = parse_msgpack_document(bytes);
  if (!doc) return base::Error(file + " is corrupt: " + doc.error().what());
  if (!doc->is_object()) return std::optional<ExecutionTimestamps>();
  JsonChecker check(file);
  ExecutionTimestamps timestamps = timestamps_from_json(*doc, check);
  for (auto& w : check.take_warnings()) warnings.push_back(std::move(w));
  return std::optional<ExecutionTimestamps>(std::move(timestamps));
}

}  // namespace runner::format
