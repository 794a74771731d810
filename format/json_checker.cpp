#include "format/json_checker.hpp"

#include <algorithm>
#include <charconv>
#include <climits>

namespace runner::format {

uint64_t json_u64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return static_cast<uint64_t>(v.get<int64_t>());
  return 0;
}

void JsonChecker::problem(const std::string& path, const std::string& cause) {
  const std::string section = path.substr(0, path.find_first_of(".["));
  Problem& p = problems_[section];
  if (p.count++ != 0) return;
  // Keys come from the file: a huge one is cut.
  constexpr size_t kMaxShown = 200;
  p.first = path.size() <= kMaxShown ? path : path.substr(0, kMaxShown) + "...";
  p.first += ": " + cause;
}

const nlohmann::json* JsonChecker::member(const nlohmann::json& object,
                                          const char* key,
                                          nlohmann::json::value_t type,
                                          const std::string& path) {
  auto it = object.find(key);
  if (it == object.end()) return nullptr;
  if (it->type() != type) {
    problem(path.empty() ? key : path, std::string("expected ") +
                                           nlohmann::json(type).type_name() +
                                           ", got " + it->type_name());
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* JsonChecker::required(const nlohmann::json& object,
                                            const char* key,
                                            const std::string& path) {
  auto it = object.find(key);
  if (it != object.end()) return &*it;
  problem(path + "." + key, "missing");
  return nullptr;
}

const std::string* JsonChecker::string(const nlohmann::json& v,
                                       const std::string& path) {
  if (v.is_string()) return v.get_ptr<const std::string*>();
  problem(path, std::string("expected string, got ") + v.type_name());
  return nullptr;
}

std::optional<uint64_t> JsonChecker::u64(const nlohmann::json& v,
                                         const std::string& path) {
  if (v.is_number_integer()) return json_u64(v);
  problem(path, std::string("expected an integer, got ") + v.type_name());
  return std::nullopt;
}

std::optional<int32_t> JsonChecker::pid(const nlohmann::json& v,
                                        const std::string& path) {
  if (v.is_number_integer()) {
    const int64_t n = v.is_number_unsigned()
                          ? static_cast<int64_t>(std::min<uint64_t>(
                                v.get<uint64_t>(), INT64_MAX))
                          : v.get<int64_t>();
    if (n >= 0 && n <= INT32_MAX) return static_cast<int32_t>(n);
  }
  problem(path,
          "expected a pid, got " +
              v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return std::nullopt;
}

std::optional<int32_t> JsonChecker::pid_key(const std::string& text,
                                            const std::string& path) {
  int32_t pid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec == std::errc() && end == text.data() + text.size() && pid >= 0)
    return pid;
  problem(path, "not a pid");
  return std::nullopt;
}

std::vector<std::string> JsonChecker::take_warnings() {
  std::vector<std::string> warnings;
  for (const auto& [section, p] : problems_) {
    std::string text = file_ + ": " + p.first;
    if (p.count > 1)
      text +=
          " (and " + std::to_string(p.count - 1) + " more in " + section + ")";
    warnings.push_back(text + ": ignored");
  }
  problems_.clear();
  return warnings;
}

}  // namespace runner::format
