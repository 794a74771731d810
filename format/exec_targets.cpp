#include "format/exec_targets.hpp"

#include <nlohmann/json.hpp>

#include "format/json_checker.hpp"

namespace runner::format {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json optional_json(const std::optional<Duration>& value) {
  return value ? Json(format_duration(*value)) : Json(nullptr);
}

// obj[key], or nullptr when absent or null.
const Json* field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

base::Status read_string(const Json& obj, const char* key,
                         std::optional<std::string>& out) {
  const Json* value = field(obj, key);
  if (value == nullptr) return {};
  if (!value->is_string())
    return base::Error(std::string("'") + key + "' must be a string or null");
  out = value->get<std::string>();
  return {};
}

base::Status read_duration(const Json& obj, const char* key,
                           std::optional<Duration>& out) {
  std::optional<std::string> text;
  if (auto st = read_string(obj, key, text); !st) return st;
  if (!text) return {};
  RUNNER_ASSIGN_OR_RETURN(out, parse_duration(*text),
                          std::string("'") + key + "'");
  return {};
}

base::Status read_count(const Json& obj, const char* key,
                        std::optional<uint64_t>& out) {
  const Json* value = field(obj, key);
  if (value == nullptr) return {};
  if (!value->is_number_unsigned())
    return base::Error(std::string("'") + key +
                       "' must be a non-negative integer or null");
  out = value->get<uint64_t>();
  return {};
}

base::Status read_walltime(const Json& obj, WalltimeOptions& out) {
  if (!obj.is_object())
    return base::Error("'walltime_args' must be an object or null");
  RUNNER_RETURN_IF_ERROR(read_duration(obj, "warmup_time", out.warmup_time),
                         "walltime_args");
  RUNNER_RETURN_IF_ERROR(read_duration(obj, "max_time", out.max_time),
                         "walltime_args");
  RUNNER_RETURN_IF_ERROR(read_duration(obj, "min_time", out.min_time),
                         "walltime_args");
  RUNNER_RETURN_IF_ERROR(read_count(obj, "max_rounds", out.max_rounds),
                         "walltime_args");
  RUNNER_RETURN_IF_ERROR(read_count(obj, "min_rounds", out.min_rounds),
                         "walltime_args");
  return {};
}

base::Result<ExecTarget> read_target(const Json& item) {
  if (!item.is_object()) return base::Error("expected an object");
  ExecTarget target;
  const Json* command = field(item, "command");
  if (command == nullptr || !command->is_array() || command->empty())
    return base::Error("'command' must be a non-empty array");
  for (const Json& word : *command) {
    if (!word.is_string())
      return base::Error("'command' must hold strings only");
    target.command.push_back(word.get<std::string>());
  }
  base::Status status = read_string(item, "name", target.name);
  if (status)
    status = read_string(item, "working_directory", target.working_directory);
  if (const Json* interleave = field(item, "interleave");
      status && interleave != nullptr) {
    if (interleave->is_boolean())
      target.interleave = interleave->get<bool>();
    else
      status = base::Error("'interleave' must be true, false or null");
  }
  const Json* walltime = field(item, "walltime_args");
  if (status && walltime != nullptr)
    status = read_walltime(*walltime, target.walltime);
  if (!status) return std::move(status.error());
  return target;
}

}  // namespace

void WalltimeOptions::override_with(const WalltimeOptions& other) {
  if (other.warmup_time) warmup_time = other.warmup_time;
  if (other.max_time) max_time = other.max_time;
  if (other.min_time) min_time = other.min_time;
  if (other.max_rounds) max_rounds = other.max_rounds;
  if (other.min_rounds) min_rounds = other.min_rounds;
}

std::string write_exec_targets(std::span<const ExecTarget> targets) {
  Json list = Json::array();
  for (const ExecTarget& t : targets) {
    Json item;
    item["command"] = t.command;
    if (t.name) item["name"] = *t.name;
    const WalltimeOptions& w = t.walltime;
    item["walltime_args"] = {{"warmup_time", optional_json(w.warmup_time)},
                             {"max_time", optional_json(w.max_time)},
                             {"min_time", optional_json(w.min_time)},
                             {"max_rounds", optional_json(w.max_rounds)},
                             {"min_rounds", optional_json(w.min_rounds)}};
    if (t.working_directory) item["working_directory"] = *t.working_directory;
    if (t.interleave) item["interleave"] = true;
    list.push_back(std::move(item));
  }
  return list.dump(-1, ' ', false, Json::error_handler_t::replace);
}

base::Result<std::vector<ExecTarget>> read_exec_targets(std::string_view json) {
  auto parsed = parse_json_document<Json>(json);
  if (!parsed)
    return base::Error("invalid JSON (expected an array of benchmarks): " +
                       parsed.error().message());
  const Json& doc = *parsed;
  if (!doc.is_array()) return base::Error("expected a JSON array");
  if (doc.empty()) return base::Error("no benchmarks given");
  std::vector<ExecTarget> targets;
  for (size_t i = 0; i < doc.size(); ++i) {
    RUNNER_ASSIGN_OR_RETURN(ExecTarget target, read_target(doc[i]),
                            "benchmark #" + std::to_string(i + 1));
    targets.push_back(std::move(target));
  }
  return targets;
}

}  // namespace runner::format
