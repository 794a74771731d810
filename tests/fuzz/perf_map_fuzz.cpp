// perf-<pid>.map (JIT symbols): the bytes as the perf map of pid 1 in an
// otherwise empty profile folder, indexed by ProfileFolder::jit_names; and
// format's reader and writer, whose output must read back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "format/format.hpp"
#include "report/profile_folder.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = [] {
    std::string dir = runner::fuzz::scratch_dir() + "/perf_map";
    std::filesystem::create_directory(dir);
    return dir;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string once =
      runner::format::format_perf_map(runner::format::parse_perf_map(text));
  size_t bad = 0;
  const auto again = runner::format::parse_perf_map(once, &bad);
  if (bad != 0 || runner::format::format_perf_map(again) != once) std::abort();
  runner::fuzz::write_input(folder + "/perf-1.map", data, size);
  auto pf = runner::report::ProfileFolder::open(folder);
  if (!pf) return 0;
  const auto* names = pf->jit_names(1);
  if (names == nullptr) return 0;
  // Each line's start is named by that line or a later one covering it.
  for (const auto& e : again) {
    const auto* found = names->find(e.start, 0);
    if (e.size != 0 && e.start != UINT64_MAX &&
        (found == nullptr || found->start > e.start || found->end <= e.start))
      std::abort();
  }
  return 0;
}
