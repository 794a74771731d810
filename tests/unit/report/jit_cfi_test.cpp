// The CFI of jitted bodies through the report's .eh_frame interpreter:
// format::jit_unwind_data() of a CPython 3.13 trampoline and of a V8 body
// (the unwind bytes of real dumps, in hand-built dumps), and of every body
// of a real python3.13 -X perf_jit dump when it is installed, give a row at
// svma 0 and at the body's last byte, and none past the FDE.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"
#include "report/cfi.hpp"
#include "tests/support/jit_dumps.hpp"
#include "tests/support/skip.hpp"

namespace runner::report {
namespace {

using format::ByteWriter;
using format::JitCode;
using format::JitDump;

using testing::from_hex;

// Real unwind info (tests/support/jit_dumps.hpp): CPython 3.13.0's for its
// 11-byte trampoline, node 20's for a 176-byte TurboFan body (FDE covers
// 173).
const std::vector<uint8_t> kCpythonUnwind = testing::cpython_unwind_info();
const std::vector<uint8_t> kV8Unwind = testing::v8_unwind_info();

// A dump of one UNWINDING_INFO and the CODE_LOAD it describes.
JitCode one_body(const std::vector<uint8_t>& unwind, uint64_t code_size) {
  ByteWriter w;
  w.u32(format::kJitDumpMagic);
  w.u32(1);
  w.u32(40);
  w.u32(62);
  w.u32(0);
  w.u32(1);
  w.u64(0);
  w.u64(0);
  const size_t padded = (unwind.size() + 7) / 8 * 8;
  w.u32(static_cast<uint32_t>(format::JitRecordId::kUnwindingInfo));
  w.u32(static_cast<uint32_t>(40 + padded));
  w.u64(1);
  w.u64(unwind.size());
  w.u64(20);
  w.u64(padded);
  w.bytes(unwind);
  w.zeros(padded - unwind.size());
  w.u32(static_cast<uint32_t>(format::JitRecordId::kCodeLoad));
  w.u32(static_cast<uint32_t>(56 + 2 + code_size));
  w.u64(2);
  w.u32(1);
  w.u32(1);
  w.u64(0x7f0000001000);
  w.u64(0x7f0000001000);
  w.u64(code_size);
  w.u64(1);
  w.bytes(std::string_view("f\0", 2));
  w.zeros(code_size);
  auto dump = format::read_jitdump(w.view());
  REQUIRE_MESSAGE(dump.has_value(), dump.error().what());
  REQUIRE(dump->code.size() == 1);
  return std::move(dump->code[0]);
}

EhFrame eh_frame_of(const JitCode& code) {
  format::UnwindData data = format::jit_unwind_data(code);
  REQUIRE(data.eh_frame_hdr_svma.has_value());
  const uint64_t hdr_svma = data.eh_frame_hdr_svma->start;
  auto eh = EhFrame::create(std::move(data.eh_frame), data.eh_frame_svma.start,
                            std::move(data.eh_frame_hdr), hdr_svma);
  REQUIRE_MESSAGE(eh.has_value(), eh.error().what());
  return std::move(*eh);
}

// Rows from svma 0 to the FDE's end (`covered` bytes), and none after.
void check_rows(const JitCode& code, uint64_t covered) {
  CAPTURE(code.name);
  EhFrame eh = eh_frame_of(code);
  CHECK(eh.uses_hdr_table());
  auto fde = eh.find_fde(0);
  REQUIRE(fde.has_value());
  CHECK(fde->pc_begin == 0);
  CHECK(fde->pc_end == covered);
  auto first = eh.find_row(0);
  REQUIRE_MESSAGE(first.has_value(), first.error().what());
  CHECK(first->start == 0);
  // On entry the CFA is rsp + 8 and the return address is at CFA - 8.
  CHECK(first->cfa.kind == CfaRule::Kind::kRegOffset);
  CHECK(first->cfa.reg == kDwarfRsp);
  CHECK(first->cfa.offset == 8);
  CHECK(first->regs[kDwarfRa].kind == RegRule::Kind::kOffset);
  CHECK(first->regs[kDwarfRa].offset == -8);
  auto last = eh.find_row(covered - 1);
  REQUIRE_MESSAGE(last.has_value(), last.error().what());
  CHECK(last->end == covered);
  CHECK_FALSE(eh.find_row(covered).has_value());
}

TEST_CASE("jit CFI: a CPython 3.13 trampoline") {
  const JitCode code = one_body(kCpythonUnwind, 11);
  check_rows(code, 11);
  // Its FDE: CFA = rsp + 16 from byte 4, rsp + 8 again from byte 10.
  EhFrame eh = eh_frame_of(code);
  auto body = eh.find_row(5);
  REQUIRE(body.has_value());
  CHECK(body->cfa.reg == kDwarfRsp);
  CHECK(body->cfa.offset == 16);
  auto ret = eh.find_row(10);
  REQUIRE(ret.has_value());
  CHECK(ret->cfa.offset == 8);
}

TEST_CASE("jit CFI: a V8 TurboFan body") {
  check_rows(one_body(kV8Unwind, 176), 173);
}

TEST_CASE("jit CFI: every body of a real python3.13 -X perf_jit dump") {
  const testing::JitDumpRun run = testing::python_perf_jit_dump(
      "def my_func(n):\n"
      "    return n + 1\n"
      "for i in range(100):\n"
      "    my_func(i)\n");
  if (!run.skip.empty()) RUNNER_SKIP_CASE(run.skip);
  auto dump = format::read_jitdump(run.bytes);
  REQUIRE_MESSAGE(dump.has_value(), dump.error().what());
  bool probe = false;
  for (const JitCode& code : dump->code) {
    probe = probe || code.name.starts_with("py::my_func:");
    check_rows(code, code.code_size);
  }
  CHECK(probe);
}

}  // namespace
}  // namespace runner::report

namespace runner::report {
namespace {

// format::cpython_trampoline_unwind_data(): the CFI the runner writes for
// CPython 3.12's perf trampolines (which describe themselves nowhere) is
// the program CPython 3.13's jitdump gives the same 11 bytes (above).
TEST_CASE("trampoline CFI: CPython's x86-64 perf trampoline") {
  const std::vector<uint8_t> code = from_hex("4883ec08ffd14883c408c3");
  auto data = format::cpython_trampoline_unwind_data(code);
  REQUIRE(data.has_value());
  CHECK(data->base_svma == 0);
  CHECK_FALSE(data->eh_frame_hdr.has_value());
  CHECK(data->eh_frame_svma.start == 16);  // ALIGN_8(11)
  auto eh = EhFrame::create(data->eh_frame, data->eh_frame_svma.start,
                            std::nullopt, 0);
  REQUIRE_MESSAGE(eh.has_value(), eh.error().what());
  const int64_t cfa_at[] = {8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 8};
  for (uint64_t pc = 0; pc < 11; ++pc) {
    CAPTURE(pc);
    auto row = eh->find_row(pc);
    REQUIRE_MESSAGE(row.has_value(), row.error().what());
    CHECK(row->cfa.kind == CfaRule::Kind::kRegOffset);
    CHECK(row->cfa.reg == kDwarfRsp);
    CHECK(row->cfa.offset == cfa_at[pc]);
    CHECK(row->regs[kDwarfRa].kind == RegRule::Kind::kOffset);
    CHECK(row->regs[kDwarfRa].offset == -8);
  }
  CHECK_FALSE(eh->find_row(11).has_value());
  // The same unwind program as CPython 3.13's own (kCpythonUnwind): the FDE
  // instructions after the pc range.
  const std::vector<uint8_t> program = {0x44, 0x0e, 0x10, 0x46, 0x0e, 0x08};
  CHECK(std::search(data->eh_frame.begin(), data->eh_frame.end(),
                    program.begin(), program.end()) != data->eh_frame.end());
}

TEST_CASE("trampoline CFI: other bytes are not taken for a trampoline") {
  CHECK_FALSE(format::cpython_trampoline_unwind_data({}).has_value());
  // An aarch64 build, a frame-pointer build, a byte off, one too many.
  for (const char* hex : {"fd7bbfa9fd030091", "554889e5ffd15dc3",
                          "4883ec08ffd04883c408c3", "4883ec08ffd14883c408c390"})
    CHECK_FALSE(
        format::cpython_trampoline_unwind_data(from_hex(hex)).has_value());
}

}  // namespace
}  // namespace runner::report
