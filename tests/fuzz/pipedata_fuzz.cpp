// perf.pipedata reader alone (the `report` target runs the whole report on
// the same input, a hundred times slower): every record of the stream,
// with and without stack copies, until the end or the first error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "perfdata/perfdata.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      runner::fuzz::scratch_dir() + "/perf.pipedata";
  runner::fuzz::write_input(path, data, size);
  for (bool copy_stack : {false, true}) {
    auto reader = runner::perfdata::PipedataReader::open(path);
    if (!reader) return 0;
    runner::perfdata::Record record;
    uint64_t records = 0;
    while (true) {
      auto next = reader->next_into(record, copy_stack);
      if (!next || !*next) break;
      ++records;
      if (record.kind == runner::perfdata::RecordKind::kSample) {
        const auto& sample = record.sample;
        const auto stack = copy_stack ? std::span<const uint8_t>(sample.stack)
                                      : reader->last_stack();
        if (stack.size() > sample.stack_size) std::abort();
      }
    }
    if (records > reader->stats().records) std::abort();
  }
  return 0;
}
