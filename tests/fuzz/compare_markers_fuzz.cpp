// ExecutionTimestamps.msgpack as `runner compare` reads it: the round
// markers of the base folder, next to the bench_example seed's results
// without their round arrays (markers are then used when their rounds
// agree with the results), compared with that seed's folder
// (compare_fuzz_support.hpp: the exit and the markdown are checked).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/compare_fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fuzz = runner::fuzz;
  const auto write_results = [](const std::string& dir, bool with_rounds) {
    const std::string text = fuzz::bench_example_results(with_rounds);
    fuzz::write_input(dir + "/results/1.json",
                      reinterpret_cast<const uint8_t*>(text.data()),
                      text.size());
    return dir;
  };
  static const std::string base =
      write_results(fuzz::compare_folder("base"), false);
  static const std::string head =
      write_results(fuzz::compare_folder("head"), true);
  fuzz::write_input(runner::format::ProfileLayout(base).execution_timestamps(),
                    data, size);
  fuzz::compare_and_check(base, head, fuzz::scratch_dir() + "/out");
  return 0;
}
