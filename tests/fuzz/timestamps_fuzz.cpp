// ExecutionTimestamps.msgpack: the bytes as the benchmark markers of an
// otherwise empty profile folder, turned into windows by ProfileFolder.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "report/profile_folder.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/timestamps";
    std::filesystem::create_directory(dir);
    return dir;
  }();
  runner::fuzz::write_input(folder + "/ExecutionTimestamps.msgpack", data,
                            size);
  auto pf = runner::report::ProfileFolder::open(folder);
  if (!pf) return 0;
  for (const auto& window : pf->windows()) {
    if (window.name.empty()) std::abort();
    for (const auto& [start, end] : window.rounds) (void)(start + end);
  }
  return 0;
}
