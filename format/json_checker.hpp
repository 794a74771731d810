// JsonChecker: lenient reading of a JSON (or msgpack) document from a file.
// Values with a wrong type or range are skipped by the readers, and one
// warning per top-level key names the file, the key path of the first one
// and how many there were (a hostile file cannot flood the output):
//   "perf.metadata: runner.tracked_pids[0]: expected a pid, got -1: ignored"
// Internal to format/ (the document readers share it), with the one bounded
// parser of JSON and msgpack documents they all use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/base.hpp"

namespace runner::format {

// No document of the project nests deeper than a few levels: one that goes
// past this is refused while it is parsed, before the containers below are
// built (a file of nested '[' would otherwise cost ~40 bytes of memory per
// byte, and nlohmann's msgpack reader recurses once per level).
inline constexpr size_t kMaxDocumentDepth = 128;

// The JSON document in `text`. Error: "nested deeper than 128 levels", or
// "not JSON (<where the syntax broke>)". With replace_invalid_utf8, bytes
// that are not UTF-8 (they can only be inside strings) read as U+FFFD
// instead of refusing the document. `callback`, when set, is nlohmann's
// parser callback (its `false` drops a value); a top-level value it drops
// reads as null.
template <typename Json>
base::Result<Json> parse_json_document(
    std::string_view text, bool replace_invalid_utf8 = false,
    typename Json::parser_callback_t callback = nullptr);

// The msgpack document in `bytes`, bounded the same way. Error: "nested
// deeper than 128 levels", or "not msgpack (<where it broke>)".
base::Result<nlohmann::json> parse_msgpack_document(std::string_view bytes);

// An integer as u64: negative ones wrap (as load biases may); 0 otherwise.
uint64_t json_u64(const nlohmann::json& v);

class JsonChecker {
 public:
  explicit JsonChecker(std::string file) : file_(std::move(file)) {}

  void problem(const std::string& path, const std::string& cause);

  // object[key] when present with the type `type`; nullptr when absent, or
  // (noted) of another type. `path` names it in the warning (default: key).
  const nlohmann::json* member(const nlohmann::json& object, const char* key,
                               nlohmann::json::value_t type,
                               const std::string& path = "");
  // object[key], noted as "missing" under `path` when absent.
  const nlohmann::json* required(const nlohmann::json& object, const char* key,
                                 const std::string& path);
  const std::string* string(const nlohmann::json& v, const std::string& path);
  // An address or size: an integer (negative ones wrap).
  std::optional<uint64_t> u64(const nlohmann::json& v, const std::string& path);
  std::optional<int32_t> pid(const nlohmann::json& v, const std::string& path);
  // A pid written as an object key ("1234").
  std::optional<int32_t> pid_key(const std::string& text,
                                 const std::string& path);

  // The warnings noted so far, in key order; forgets them.
  std::vector<std::string> take_warnings();

 private:
  struct Problem {
    std::string first;
    uint64_t count = 0;
  };
  std::string file_;
  std::map<std::string, Problem> problems_;
};

}  // namespace runner::format
