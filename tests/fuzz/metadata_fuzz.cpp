// perf.metadata: the bytes as the metadata of an otherwise empty profile
// folder, loaded by the report's ProfileFolder (modules per pid, key paths,
// tracked pids, the benchmark windows of its marker copies).
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "report/profile_folder.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/metadata";
    std::filesystem::create_directory(dir);
    return dir;
  }();
  runner::fuzz::write_input(folder + "/perf.metadata", data, size);
  auto pf = runner::report::ProfileFolder::open(folder);
  if (!pf) return 0;
  for (const auto& [pid, modules] : pf->pids()) {
    for (const auto& ref : modules.symbols) (void)pf->key_path(ref.key);
    for (const auto& ref : modules.unwind) (void)pf->key_path(ref.key);
  }
  for (const auto& window : pf->windows())
    if (window.name.empty()) std::abort();
  return 0;
}
