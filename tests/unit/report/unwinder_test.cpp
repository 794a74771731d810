// report::Unwinder on hand-made CFI: a profile folder with one module whose
// .eh_frame is written byte by byte here, and samples whose registers and
// stack copy are chosen so that each step is known.
#include "report/unwinder.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "report/profile_folder.hpp"
#include "symbols/symbols.hpp"
#include "tests/support/temp_dir.hpp"

using namespace runner::report;

namespace {

// .eh_frame builder: CIEs with augmentation "zR" (+ 'S' for signal frames),
// FDEs with absolute udata4 addresses, x86_64 conventions (code alignment
// 1, data alignment -8, return address column 16).
class EhFrameBuilder {
 public:
  // A CIE whose initial rules are CFA = rsp + cfa_offset, return address
  // at CFA - 8. Returns its offset.
  size_t cie(uint8_t cfa_offset, bool signal_frame) {
    const size_t at = out_.size();
    std::vector<uint8_t> body = {0, 0, 0, 0, 1, 'z', 'R'};  // id, version
    if (signal_frame) body.push_back('S');
    body.insert(body.end(), {0, 1, 0x78, 16, 1, 0x03,  // aug data: udata4
                             0x0c, 7, cfa_offset,      // def_cfa rsp
                             0x90, 1});                // offset r16, cfa-8
    entry(body);
    return at;
  }
  // An FDE of [begin, begin + size) under the CIE at `cie_offset`, with no
  // instructions of its own.
  void fde(size_t cie_offset, uint32_t begin, uint32_t size) {
    const size_t id_pos = out_.size() + 4;
    const uint32_t cie_pointer = static_cast<uint32_t>(id_pos - cie_offset);
    std::vector<uint8_t> body;
    put32(&body, cie_pointer);
    put32(&body, begin);
    put32(&body, size);
    body.push_back(0);  // augmentation data length
    entry(body);
  }
  std::vector<uint8_t> finish() {
    put32(&out_, 0);  // terminator
    return out_;
  }

 private:
  static void put32(std::vector<uint8_t>* v, uint32_t x) {
    for (int i = 0; i < 4; ++i)
      v->push_back(static_cast<uint8_t>(x >> (8 * i)));
  }
  void entry(const std::vector<uint8_t>& body) {
    put32(&out_, static_cast<uint32_t>(body.size()));
    out_.insert(out_.end(), body.begin(), body.end());
  }
  std::vector<uint8_t> out_;
};

// A folder where pid 42 maps the module "0__mod" at its link addresses
// over [0x1000, 0x9000).
void write_folder(const runner::testing::TempDir& dir,
                  std::vector<uint8_t> eh_frame) {
  runner::symbols::UnwindData data;
  data.path = "/mod";
  data.eh_frame_svma = {0x9000, 0x9000 + eh_frame.size()};
  data.eh_frame = std::move(eh_frame);
  auto bytes = runner::format::encode_unwind_data(data);
  REQUIRE(runner::base::write_file_atomic(
      dir.file("0__mod.unwind_data"), std::string(bytes.begin(), bytes.end())));
  REQUIRE(runner::base::write_file_atomic(dir.file("perf.metadata"),
                                          std::string(R"({
      "mapped_process_unwind_data_by_pid": {"42": [{"unwind_data_key":
          "0__mod", "avma_range": {"start": 4096, "end": 36864},
          "base_avma": 0}]},
      "path_key_to_path": {"0__mod": "/mod"}})")));
}

// A DWARF sample of pid 42 with only rsp and rip (perf register bits 7, 8).
runner::perfdata::SampleRecord sample(uint64_t sp, uint64_t ip) {
  runner::perfdata::SampleRecord s;
  s.pid = s.tid = 42;
  s.ip = ip;
  s.regs_abi = 2;  // PERF_SAMPLE_REGS_ABI_64
  s.regs_mask = (1u << 7) | (1u << 8);
  s.regs = {sp, ip};
  return s;
}

std::vector<uint8_t> stack_of(const std::vector<uint64_t>& words) {
  std::vector<uint8_t> out(words.size() * 8);
  for (size_t i = 0; i < words.size(); ++i)
    for (int b = 0; b < 8; ++b)
      out[i * 8 + b] = static_cast<uint8_t>(words[i] >> (8 * b));
  return out;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("the pc interrupted by a signal frame is looked up exactly") {
    // A signal trampoline at [0x1000, 0x1010) ('S': CFA = rsp + 16, the
    // interrupted pc at CFA - 8) interrupted a function at its very first
    // byte, 0x2000; no FDE covers 0x1fff. The function (CFA = rsp + 8)
    // was called from 0x5000, outside every FDE.
    EhFrameBuilder b;
    const size_t signal_cie = b.cie(16, /*signal_frame=*/true);
    b.fde(signal_cie, 0x1000, 0x10);
    const size_t plain_cie = b.cie(8, /*signal_frame=*/false);
    b.fde(plain_cie, 0x2000, 0x10);
    runner::testing::TempDir dir;
    write_folder(dir, b.finish());
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE(folder);
    Unwinder unwinder(*folder);

    const uint64_t sp = 0x7ffc0000;
    const auto stack = stack_of({0, 0x2000, 0x5000, 0});
    UnwoundStack out = unwinder.unwind(sample(sp, 0x1004), stack);
    // 0x2000 is unwound with its own FDE (as 0x1fff it has none), which
    // finds its caller 0x5000; there the unwinding stops (no module).
    CHECK(out.addrs == std::vector<uint64_t>{0x1004, 0x2000, 0x5000});
    CHECK(out.end == StackEnd::kUnknown);
    // 0x2000 is symbolized as is too; 0x5000 is a return address.
    CHECK(out.exact_pc(0));
    CHECK(out.exact_pc(1));
    CHECK_FALSE(out.exact_pc(2));
  }

  TEST_CASE("a return address is looked up at the call (minus one)") {
    // The same function, returned to at 0x2010 (one past its end, as after
    // a call that never returns): the call is at 0x200f, inside its FDE.
    EhFrameBuilder b;
    const size_t plain_cie = b.cie(8, /*signal_frame=*/false);
    b.fde(plain_cie, 0x1000, 0x10);
    b.fde(plain_cie, 0x2000, 0x10);
    runner::testing::TempDir dir;
    write_folder(dir, b.finish());
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE(folder);
    Unwinder unwinder(*folder);

    const uint64_t sp = 0x7ffc0000;
    const auto stack = stack_of({0x2010, 0x5000, 0});
    UnwoundStack out = unwinder.unwind(sample(sp, 0x1004), stack);
    CHECK(out.addrs == std::vector<uint64_t>{0x1004, 0x2010, 0x5000});
    CHECK(out.end == StackEnd::kUnknown);
    CHECK(out.interrupted.empty());
  }
}
