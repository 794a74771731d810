// perf.metadata: the bytes read by format::read_perf_metadata (with and
// without the debug-info members; what is read must write and read back the
// same), then as the metadata of an otherwise empty profile folder, loaded by
// the report's ProfileFolder (modules per pid, key paths, tracked pids, the
// benchmark windows of its marker copies).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "format/format.hpp"
#include "report/profile_folder.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

void read_directly(std::string_view text) {
  for (bool debug_info : {false, true}) {
    auto read = runner::format::read_perf_metadata(text, {debug_info});
    if (!read) continue;
    const std::string written =
        runner::format::write_perf_metadata(read->metadata);
    auto again = runner::format::read_perf_metadata(written, {debug_info});
    // The parser takes valid UTF-8 only, so nothing was replaced.
    if (!again || !(again->metadata == read->metadata) ||
        !again->warnings.empty() || !again->timestamps_warnings.empty())
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/metadata";
    std::filesystem::create_directory(dir);
    return dir;
  }();
  read_directly(std::string_view(reinterpret_cast<const char*>(data), size));
  runner::fuzz::write_input(runner::format::ProfileLayout(folder).metadata(),
                            data, size);
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
