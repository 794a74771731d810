// The perf.metadata and ExecutionTimestamps.msgpack files of the golden
// corpus were written by `runner run`: read and written again they must come
// back byte for byte (the typed documents lose nothing the agent writes).
// The corpus predates two counters of perf.metadata's own "runner" section:
// there every member of the file must come back with its value.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "format/format.hpp"

using runner::format::ProfileLayout;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// (folder, content) of the file `name` in each folder of the corpus that has
// one.
std::vector<std::pair<std::string, std::string>> golden_files(
    std::string_view name) {
  const char* dir = std::getenv("GOLDEN_DIR");
  REQUIRE_MESSAGE(dir != nullptr, "GOLDEN_DIR is not set");
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(dir) + "/folders")) {
    const std::filesystem::path file = entry.path() / name;
    if (std::filesystem::exists(file))
      files.emplace_back(entry.path().string(), slurp(file));
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("golden perf.metadata files round-trip byte for byte") {
  size_t compared = 0;
  for (const auto& [folder, text] : golden_files(ProfileLayout::kMetadata)) {
    auto read = runner::format::read_perf_metadata(text);
    // The corrupt ones are the report's malformed-input cases.
    if (!read || !read->warnings.empty() || !read->timestamps_warnings.empty())
      continue;
    using Json = nlohmann::ordered_json;
    Json original = Json::parse(text);
    Json written =
        Json::parse(runner::format::write_perf_metadata(read->metadata));
    for (const auto& [key, value] : original["runner"].items()) {
      if (!value.is_object()) {
        CHECK_MESSAGE(written["runner"][key] == value, folder, " runner.", key);
        continue;
      }
      for (const auto& [name, count] : value.items())
        CHECK_MESSAGE(written["runner"][key][name] == count, folder, " runner.",
                      key, ".", name);
    }
    original.erase("runner");
    written.erase("runner");
    CHECK_MESSAGE(written.dump() == original.dump(), folder);
    ++compared;
  }
  CHECK(compared >= 5);
}

TEST_CASE("golden ExecutionTimestamps.msgpack files round-trip") {
  size_t compared = 0;
  for (const auto& [folder, bytes] :
       golden_files(ProfileLayout::kExecutionTimestamps)) {
    std::vector<std::string> warnings;
    auto read = runner::format::read_execution_timestamps(bytes, warnings);
    if (!read || !*read || !warnings.empty()) continue;
    CHECK_MESSAGE(runner::format::write_execution_timestamps(**read) == bytes,
                  folder);
    ++compared;
  }
  CHECK(compared >= 5);
}
