// GitHub's event payload: read here only (see github_event.hpp).
#include "format/github_event.hpp"

#include <nlohmann/json.hpp>

namespace runner::format {
namespace {

using Json = nlohmann::json;

const Json* at_path(const Json& j, std::initializer_list<const char*> path) {
  const Json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

std::optional<std::string> text_at(const Json& j,
                                   std::initializer_list<const char*> path) {
  const Json* v = at_path(j, path);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

}  // namespace

base::Result<GitHubEvent> read_github_event(std::string_view text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return base::Error("the event payload is not a JSON object");
  GitHubEvent e;
  if (const Json* n = at_path(j, {"pull_request", "number"});
      n != nullptr && n->is_number_unsigned())
    e.number = n->get<uint64_t>();
  e.head_sha = text_at(j, {"pull_request", "head", "sha"});
  e.head_ref = text_at(j, {"pull_request", "head", "ref"});
  e.base_sha = text_at(j, {"pull_request", "base", "sha"});
  e.base_ref = text_at(j, {"pull_request", "base", "ref"});
  e.sender_login = text_at(j, {"sender", "login"});
  if (const Json* id = at_path(j, {"sender", "id"}); id != nullptr) {
    if (id->is_number_integer())
      e.sender_id = std::to_string(id->get<int64_t>());
    if (id->is_string()) e.sender_id = id->get<std::string>();
  }
  return e;
}

}  // namespace runner::format
