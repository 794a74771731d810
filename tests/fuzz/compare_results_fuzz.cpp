// results/<pid>.json as `runner compare` reads it: the bytes through
// format::read_walltime_results (what it reads writes and reads back the
// same), then as the results file of the base folder of a comparison with
// the bench_example seed's folder (compare_fuzz_support.hpp: the exit and
// the markdown are checked).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/compare_fuzz_support.hpp"

namespace {

void read_directly(std::string_view text) {
  auto read = runner::format::read_walltime_results(text);
  if (!read) {
    if (read.error().message().empty()) std::abort();
    return;
  }
  auto again = runner::format::read_walltime_results(
      runner::format::write_walltime_results(read->creator, read->benchmarks));
  if (!again || !(again->benchmarks == read->benchmarks) ||
      !(again->creator == read->creator))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = runner::fuzz;
  static const std::string base = fuzz::compare_folder("base");
  static const std::string head = [] {
    const std::string dir = fuzz::compare_folder("head");
    const std::string text = fuzz::bench_example_results(true);
    fuzz::write_input(dir + "/results/1.json",
                      reinterpret_cast<const uint8_t*>(text.data()),
                      text.size());
    return dir;
  }();
  read_directly(std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::write_input(base + "/results/1.json", data, size);
  fuzz::compare_and_check(base, head, fuzz::scratch_dir() + "/out");
  return 0;
}
