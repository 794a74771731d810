// jit-<pid>.dump: the jitdump reader on any bytes. What it accepts must be
// self-consistent (whole records end at bytes_used, and reading just those
// bytes gives the same bodies; line files index the file table; code fits
// the input), and the CFI of each body (jit_unwind_data) then goes through
// the report's .eh_frame interpreter at the body's first, middle and last
// byte.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "format/format.hpp"
#include "report/cfi.hpp"

namespace {

using runner::format::JitCode;
using runner::format::JitDump;

void check_consistent(std::span<const uint8_t> input, const JitDump& dump) {
  if (dump.bytes_used > input.size()) std::abort();
  if (!dump.truncated && dump.bytes_used != input.size()) std::abort();
  for (const JitCode& code : dump.code) {
    if (code.code_size > input.size()) std::abort();
    for (const auto& line : code.lines)
      if (line.file >= dump.files.size()) std::abort();
  }
  auto whole = runner::format::read_jitdump(input.first(dump.bytes_used));
  if (!whole || whole->code.size() != dump.code.size() ||
      whole->bytes_used != dump.bytes_used)
    std::abort();
}

void walk_cfi(const JitCode& code) {
  runner::format::UnwindData data = runner::format::jit_unwind_data(code);
  if (data.base_svma != 0 ||
      data.eh_frame_svma.start != ((code.code_size + 7) & ~uint64_t{7}))
    std::abort();
  if (data.eh_frame.empty()) return;
  const uint64_t hdr_svma =
      data.eh_frame_hdr_svma ? data.eh_frame_hdr_svma->start : 0;
  auto eh = runner::report::EhFrame::create(
      std::move(data.eh_frame), data.eh_frame_svma.start,
      std::move(data.eh_frame_hdr), hdr_svma);
  if (!eh) return;
  (void)eh->find_row(0);
  (void)eh->find_row(code.code_size / 2);
  if (code.code_size != 0) (void)eh->find_row(code.code_size - 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  auto dump = runner::format::read_jitdump(input);
  if (!dump) return 0;
  check_consistent(input, *dump);
  size_t walked = 0;
  for (const JitCode& code : dump->code) {
    if (!code.unwind) continue;
    if (++walked > 32) break;  // bounded work per input
    walk_cfi(code);
  }
  return 0;
}
