// ExecutionTimestamps.msgpack: the bytes read by
// format::read_execution_timestamps (what is read must write and read back
// the same), then as the benchmark markers of an otherwise empty profile
// folder, turned into windows by ProfileFolder.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "format/format.hpp"
#include "report/profile_folder.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

void read_directly(std::string_view bytes) {
  std::vector<std::string> warnings;
  auto read = runner::format::read_execution_timestamps(bytes, warnings);
  if (!read || !*read) return;
  std::vector<std::string> none;
  auto again = runner::format::read_execution_timestamps(
      runner::format::write_execution_timestamps(**read), none);
  if (!again || !*again || !(**again == **read) || !none.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/timestamps";
    std::filesystem::create_directory(dir);
    return dir;
  }();
  read_directly(std::string_view(reinterpret_cast<const char*>(data), size));
  runner::fuzz::write_input(
      runner::format::ProfileLayout(folder).execution_timestamps(), data, size);
  auto pf = runner::report::ProfileFolder::open(folder);
  if (!pf) return 0;
  for (const auto& window : pf->windows()) {
    if (window.name.empty()) std::abort();
    for (const auto& [start, end] : window.rounds) (void)(start + end);
  }
  return 0;
}
