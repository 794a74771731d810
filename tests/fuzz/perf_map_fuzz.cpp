// perf-<pid>.map (JIT symbols): the bytes as the perf map of pid 1 in an
// otherwise empty profile folder, parsed by ProfileFolder::perf_map.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "report/profile_folder.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/perf_map";
    std::filesystem::create_directory(dir);
    return dir;
  }();
  runner::fuzz::write_input(folder + "/perf-1.map", data, size);
  auto pf = runner::report::ProfileFolder::open(folder);
  if (!pf) return 0;
  const auto* map = pf->perf_map(1);
  if (map == nullptr) return 0;
  for (size_t i = 1; i < map->size(); ++i)
    if ((*map)[i - 1].start > (*map)[i].start) std::abort();
  return 0;
}
