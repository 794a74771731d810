// jitdump: hand-built dumps of every record kind, the "\xff" file
// shorthand, moves, a cut at every byte offset, lying sizes, rejected
// headers; the CFI placement of jit_unwind_data() on the unwind bytes real
// CPython 3.13 and V8 dumps carry; and real dumps written by node
// --perf-prof and python3.13 -X perf_jit when they are installed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "format/format.hpp"
#include "tests/support/jit_dumps.hpp"
#include "tests/support/skip.hpp"

namespace runner::format {
namespace {

using testing::from_hex;

// Real unwind info (tests/support/jit_dumps.hpp).
const std::vector<uint8_t> kCpythonUnwind = testing::cpython_unwind_info();
constexpr uint64_t kCpythonCodeSize = 11;
const std::vector<uint8_t> kV8Unwind = testing::v8_unwind_info();
constexpr uint64_t kV8CodeSize = 176;

struct Entry {
  uint64_t addr;
  uint32_t line, column;
  std::string file;
};

// Writes a little-endian jitdump; `ends` are the offsets where whole
// records (and the header) end.
class Builder {
 public:
  explicit Builder(uint64_t flags = 0, uint32_t header_size = 40,
                   uint32_t magic = kJitDumpMagic, uint32_t version = 1) {
    w_.u32(magic);
    w_.u32(version);
    w_.u32(header_size);
    w_.u32(62);          // EM_X86_64
    w_.u32(0xDEADBEEF);  // pad1, as V8 writes it
    w_.u32(4242);        // pid
    w_.u64(1000);        // timestamp
    w_.u64(flags);
    if (header_size > 40 && header_size < 4096) w_.zeros(header_size - 40);
    ends.push_back(w_.size());
  }

  Builder& load(uint64_t ts, uint64_t addr, uint64_t size, uint64_t index,
                std::string_view name, size_t extra = 0) {
    ByteWriter p;
    p.u32(7);  // pid
    p.u32(8);  // tid
    p.u64(addr);
    p.u64(addr);
    p.u64(size);
    p.u64(index);
    p.bytes(name);
    p.u8(0);
    p.zeros(extra);  // optional data between the name and the code
    for (uint64_t i = 0; i < size; ++i) p.u8(0xcc);
    return record(JitRecordId::kCodeLoad, ts, p.view());
  }

  Builder& move(uint64_t ts, uint64_t old_addr, uint64_t new_addr,
                uint64_t size, uint64_t index) {
    ByteWriter p;
    p.u32(7);
    p.u32(9);
    p.u64(new_addr);
    p.u64(old_addr);
    p.u64(new_addr);
    p.u64(size);
    p.u64(index);
    return record(JitRecordId::kCodeMove, ts, p.view());
  }

  Builder& debug(uint64_t code_addr, const std::vector<Entry>& entries) {
    ByteWriter p;
    p.u64(code_addr);
    p.u64(entries.size());
    for (const Entry& e : entries) {
      p.u64(e.addr);
      p.u32(e.line);
      p.u32(e.column);
      p.bytes(e.file);
      p.u8(0);
    }
    p.align(8);
    return record(JitRecordId::kDebugInfo, 5, p.view());
  }

  Builder& unwind(const std::vector<uint8_t>& data, uint64_t hdr_size,
                  uint64_t mapped) {
    ByteWriter p;
    p.u64(data.size());
    p.u64(hdr_size);
    p.u64(mapped);
    p.bytes(data);
    p.align(8);
    return record(JitRecordId::kUnwindingInfo, 6, p.view());
  }

  Builder& close(uint64_t ts) { return record(JitRecordId::kClose, ts, {}); }

  Builder& record(JitRecordId id, uint64_t ts,
                  std::span<const uint8_t> payload) {
    return raw(static_cast<uint32_t>(id), 16 + payload.size(), ts, payload);
  }

  Builder& raw(uint32_t id, uint64_t total, uint64_t ts,
               std::span<const uint8_t> payload) {
    w_.u32(id);
    w_.u32(static_cast<uint32_t>(total));
    w_.u64(ts);
    w_.bytes(payload);
    ends.push_back(w_.size());
    return *this;
  }

  std::vector<uint8_t> bytes() const { return w_.view(); }
  std::vector<size_t> ends;

 private:
  ByteWriter w_;
};

JitDump read_ok(const std::vector<uint8_t>& bytes) {
  auto dump = read_jitdump(bytes);
  REQUIRE_MESSAGE(dump.has_value(), dump.error().what());
  return std::move(*dump);
}

std::string read_error(const std::vector<uint8_t>& bytes) {
  auto dump = read_jitdump(bytes);
  REQUIRE_FALSE(dump.has_value());
  return dump.error().what();
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

void put_u32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(std::vector<uint8_t>& bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    bytes[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// The FDE of a one-FDE .eh_frame decoded by hand, pc-relative sdata4
// pointers resolved at `eh_frame_svma`: [pc_begin, pc_end).
struct DecodedFde {
  int64_t pc_begin = 0;
  uint64_t pc_range = 0;
  uint8_t encoding = 0;  // the CIE's 'R' augmentation byte
};

DecodedFde decode_single_fde(std::span<const uint8_t> eh, uint64_t svma) {
  ByteReader r(eh);
  const uint32_t cie_length = r.u32();
  REQUIRE(r.u32() == 0);  // CIE id
  const uint8_t version = r.u8();
  std::string aug;
  for (char c = static_cast<char>(r.u8()); c != 0 && r.ok();
       c = static_cast<char>(r.u8()))
    aug += c;
  REQUIRE(aug.starts_with("z"));
  r.uleb128();  // code alignment
  r.sleb128();  // data alignment
  if (version == 1)
    r.u8();
  else
    r.uleb128();  // return address column
  const uint64_t aug_length = r.uleb128();
  auto aug_data = r.bytes(aug_length);
  REQUIRE(r.ok());
  REQUIRE(aug.back() == 'R');  // the FDE encoding is the last aug datum
  DecodedFde out;
  out.encoding = aug_data.back();
  REQUIRE(r.seek(4 + cie_length));
  r.u32();  // FDE length
  const size_t cie_field = r.pos();
  CHECK(r.u32() == cie_field);  // back from this field to the CIE at 0
  const size_t field = r.pos();
  const int32_t pc = r.i32();
  out.pc_range = r.u32();
  REQUIRE(r.ok());
  out.pc_begin = static_cast<int64_t>(svma + field) + pc;
  return out;
}

// The hdr's three pointers resolved: .eh_frame start, the table's first
// initial location and FDE address.
struct DecodedHdr {
  int64_t eh_frame = 0, initial_location = 0, fde = 0;
  uint32_t count = 0;
};

DecodedHdr decode_hdr(std::span<const uint8_t> hdr, uint64_t svma) {
  REQUIRE(hdr.size() == 20);
  CHECK(hdr[0] == 1);
  CHECK(hdr[1] == 0x1b);  // pcrel | sdata4
  CHECK(hdr[2] == 0x03);  // udata4
  CHECK(hdr[3] == 0x3b);  // datarel | sdata4
  DecodedHdr out;
  const int64_t base = static_cast<int64_t>(svma);
  out.eh_frame = base + 4 + static_cast<int32_t>(load_le(hdr, 4, 4));
  out.count = static_cast<uint32_t>(load_le(hdr, 8, 4));
  out.initial_location = base + static_cast<int32_t>(load_le(hdr, 12, 4));
  out.fde = base + static_cast<int32_t>(load_le(hdr, 16, 4));
  return out;
}

// jit_unwind_data() of `code` checked the way an unwinder reads it: the FDE
// and the hdr's table both start at svma 0 (the code) and the FDE covers
// at most code_size bytes.
void check_unwind_placement(const JitCode& code, bool whole_code) {
  CAPTURE(code.name);
  const UnwindData data = jit_unwind_data(code);
  CHECK(data.base_svma == 0);
  REQUIRE_FALSE(data.eh_frame.empty());
  const uint64_t at = data.eh_frame_svma.start;
  CHECK(at == ((code.code_size + 7) & ~uint64_t{7}));
  CHECK(data.eh_frame_svma.end == at + data.eh_frame.size());
  const DecodedFde fde = decode_single_fde(data.eh_frame, at);
  CHECK(fde.encoding == 0x1b);
  CHECK(fde.pc_begin == 0);
  if (whole_code)
    CHECK(fde.pc_range == code.code_size);
  else
    CHECK(fde.pc_range <= code.code_size);
  REQUIRE(data.eh_frame_hdr.has_value());
  REQUIRE(data.eh_frame_hdr_svma.has_value());
  CHECK(data.eh_frame_hdr_svma->start == data.eh_frame_svma.end);
  const DecodedHdr hdr =
      decode_hdr(*data.eh_frame_hdr, data.eh_frame_hdr_svma->start);
  CHECK(hdr.eh_frame == static_cast<int64_t>(at));
  CHECK(hdr.count == 1);
  CHECK(hdr.initial_location == 0);
  CHECK(hdr.fde == static_cast<int64_t>(at + 4 + load_le(data.eh_frame, 0, 4)));
}

TEST_CASE("jitdump: the header and every record kind") {
  Builder b(kJitFlagArchTimestamp);
  b.debug(0x1000, {{0x1040, 3, 7, "a.js"},
                   {0x1048, 4, 1, "\xff"},
                   {0x1050, 9, 2, "b.js"},
                   {0x1058, 10, 0, "\xff"}})
      .unwind(kCpythonUnwind, 20, 80)
      .load(100, 0x1000, 16, 1, "first")
      .load(200, 0x2000, 0, 2, "empty body")
      .close(300);
  const JitDump dump = read_ok(b.bytes());
  CHECK(dump.version == 1);
  CHECK(dump.pid == 4242);
  CHECK(dump.elf_mach == 62);
  CHECK(dump.timestamp == 1000);
  CHECK(dump.arch_timestamp());
  CHECK_FALSE(dump.truncated);
  CHECK(dump.bytes_used == b.bytes().size());
  CHECK(dump.closed == std::optional<uint64_t>(300));
  REQUIRE(dump.code.size() == 2);

  const JitCode& first = dump.code[0];
  CHECK(first.timestamp == 100);
  CHECK(first.pid == 7);
  CHECK(first.tid == 8);
  CHECK(first.vma == 0x1000);
  CHECK(first.code_addr == 0x1000);
  CHECK(first.code_size == 16);
  CHECK(first.code_index == 1);
  CHECK(first.name == "first");
  REQUIRE(first.lines.size() == 4);
  CHECK(first.lines[0] == JitLine{0x1040, 3, 7, first.lines[0].file});
  CHECK(dump.file(first.lines[0]) == "a.js");
  CHECK(dump.file(first.lines[1]) == "a.js");  // "\xff": the previous file
  CHECK(first.lines[1].line == 4);
  CHECK(dump.file(first.lines[2]) == "b.js");
  CHECK(dump.file(first.lines[3]) == "b.js");
  CHECK(dump.files.size() == 2);
  REQUIRE(first.unwind.has_value());
  CHECK(first.unwind->eh_frame.size() == 48);  // .eh_frame first
  CHECK(first.unwind->eh_frame_hdr.size() == 20);
  CHECK(first.unwind->eh_frame_hdr[0] == 1);  // the hdr's version byte
  CHECK(first.unwind->mapped_size == 80);

  // DEBUG_INFO and UNWINDING_INFO went to the first LOAD only.
  const JitCode& second = dump.code[1];
  CHECK(second.name == "empty body");
  CHECK(second.code_size == 0);
  CHECK(second.lines.empty());
  CHECK_FALSE(second.unwind.has_value());
  CHECK(dump.unused_records == 0);
  CHECK(dump.unknown_records == 0);
}

TEST_CASE("jitdump: the file shorthand, files shared between records") {
  Builder b;
  b.debug(0x1000, {{0x1000, 1, 0, "\xff"}, {0x1004, 2, 0, "x.py"}})
      .load(1, 0x1000, 4, 1, "f")
      .debug(0x2000, {{0x2000, 5, 0, "x.py"}, {0x2004, 6, 0, "\xff"}})
      .load(2, 0x2000, 4, 2, "g");
  const JitDump dump = read_ok(b.bytes());
  REQUIRE(dump.code.size() == 2);
  // A first entry "\xff" has no previous file.
  CHECK(dump.file(dump.code[0].lines[0]).empty());
  CHECK(dump.file(dump.code[0].lines[1]) == "x.py");
  CHECK(dump.code[1].lines[0].file == dump.code[0].lines[1].file);
  CHECK(dump.code[1].lines[1].file == dump.code[0].lines[1].file);
  CHECK(dump.files.size() == 2);  // "" and "x.py", once each
}

TEST_CASE("jitdump: CODE_MOVE goes to the LOAD of its code_index") {
  Builder b;
  b.load(10, 0x1000, 32, 5, "moved")
      .load(11, 0x3000, 8, 6, "stays")
      .move(20, 0x1000, 0x5000, 32, 5)
      .move(30, 0x5000, 0x6000, 32, 5)
      .move(31, 0x7000, 0x8000, 32, 99)  // no such code_index
      .move(32, 0x3000, 0x9000, 16, 6);  // code_size cannot change
  const JitDump dump = read_ok(b.bytes());
  REQUIRE(dump.code.size() == 2);
  const JitCode& moved = dump.code[0];
  CHECK(moved.code_addr == 0x1000);  // the LOAD's placement is kept
  REQUIRE(moved.moves.size() == 2);
  CHECK(moved.moves[0].timestamp == 20);
  CHECK(moved.moves[0].old_code_addr == 0x1000);
  CHECK(moved.moves[0].new_code_addr == 0x5000);
  CHECK(moved.moves[0].vma == 0x5000);
  CHECK(moved.moves[0].tid == 9);
  CHECK(moved.moves[1].timestamp == 30);
  CHECK(moved.moves[1].new_code_addr == 0x6000);
  CHECK(dump.code[1].moves.empty());
  CHECK(dump.unmatched_moves == 2);
}

TEST_CASE("jitdump: unknown records are skipped, unused ones counted") {
  const std::vector<uint8_t> junk = {1, 2, 3, 4, 5, 6, 7};
  Builder b;
  b.raw(5, 16 + junk.size(), 1, junk)
      .debug(0, {{0, 1, 0, "dropped.js"}})
      .debug(0, {{0, 2, 0, "kept.js"}})  // replaces the first, as in perf
      .raw(77, 16, 2, {})
      .load(3, 0x1000, 4, 1, "f")
      .close(4)
      .load(5, 0x2000, 4, 2, "after close")
      .unwind(kCpythonUnwind, 20, 80);  // no LOAD after it
  const JitDump dump = read_ok(b.bytes());
  CHECK(dump.unknown_records == 2);
  CHECK(dump.unused_records == 2);
  REQUIRE(dump.code.size() == 2);
  REQUIRE(dump.code[0].lines.size() == 1);
  CHECK(dump.file(dump.code[0].lines[0]) == "kept.js");
  CHECK(dump.code[1].name == "after close");
  CHECK(dump.closed == std::optional<uint64_t>(4));
}

TEST_CASE("jitdump: optional data between the name and the code") {
  Builder b;
  b.load(1, 0x1000, 8, 1, "padded", 5);
  const JitDump dump = read_ok(b.bytes());
  REQUIRE(dump.code.size() == 1);
  CHECK(dump.code[0].name == "padded");
  CHECK(dump.code[0].code_size == 8);
}

TEST_CASE("jitdump: a cut at every byte offset reads the whole records") {
  Builder b;
  b.debug(0x1000, {{0x1000, 1, 2, "f.js"}, {0x1008, 2, 0, "\xff"}})
      .unwind(kV8Unwind, 20, 88)
      .load(1, 0x1000, 24, 0, "f")
      .move(2, 0x1000, 0x4000, 24, 0)
      .raw(9, 20, 3, std::vector<uint8_t>{1, 2, 3, 4})
      .load(4, 0x2000, 3, 1, "g")
      .close(5);
  const std::vector<uint8_t> whole = b.bytes();
  for (size_t cut = 0; cut <= whole.size(); ++cut) {
    CAPTURE(cut);
    const std::vector<uint8_t> part(whole.begin(), whole.begin() + cut);
    auto dump = read_jitdump(part);
    REQUIRE_MESSAGE(dump.has_value(), dump.error().what());
    // The last record end at or before the cut.
    size_t used = 0, records = 0;
    for (size_t end : b.ends) {
      if (end > cut) break;
      used = end;
      ++records;
    }
    CHECK(dump->bytes_used == used);
    // Even an empty file is cut inside the header.
    CHECK(dump->truncated == (used != cut || cut < 40));
    if (records == 0) continue;  // the header is not all there
    CHECK(dump->pid == 4242);
    const size_t loads = (records > 3) + (records > 6);
    CHECK(dump->code.size() == loads);
    if (loads >= 1) {
      CHECK(dump->code[0].lines.size() == 2);
      CHECK(dump->code[0].moves.size() == (records > 4 ? 1u : 0u));
    }
    CHECK(dump->closed.has_value() == (records > 7));
  }
}

TEST_CASE("jitdump: a zero-filled tail is an unwritten end") {
  Builder b;
  b.load(1, 0x1000, 4, 1, "f");
  std::vector<uint8_t> bytes = b.bytes();
  const size_t used = bytes.size();
  bytes.resize(bytes.size() + 4096, 0);
  const JitDump dump = read_ok(bytes);
  CHECK(dump.code.size() == 1);
  CHECK(dump.truncated);
  CHECK(dump.bytes_used == used);
}

TEST_CASE("jitdump: a record that lies about its sizes is an error") {
  Builder header;
  const size_t at = header.ends.back();  // first record's offset
  SUBCASE("total_size below the prefix, bytes after it") {
    Builder b;
    b.load(1, 0x1000, 4, 1, "f");
    std::vector<uint8_t> bytes = b.bytes();
    put_u32(bytes, at + 4, 8);
    CHECK(contains(read_error(bytes), "CODE_LOAD at offset 40: total_size 8"));
  }
  SUBCASE("code_size beyond the record") {
    Builder b;
    b.load(1, 0x1000, 4, 1, "f").close(2);
    std::vector<uint8_t> bytes = b.bytes();
    put_u64(bytes, at + 40, 1000);
    CHECK(contains(read_error(bytes), "code_size 1000 does not fit"));
  }
  SUBCASE("code_size eating the name's NUL") {
    Builder b;
    b.load(1, 0x1000, 4, 1, "f").close(2);
    std::vector<uint8_t> bytes = b.bytes();
    put_u64(bytes, at + 40, 5);  // the code now starts at the NUL
    CHECK(contains(read_error(bytes), "no NUL"));
  }
  SUBCASE("code_size near 2^64") {
    Builder b;
    b.load(1, 0x1000, 4, 1, "f");
    std::vector<uint8_t> bytes = b.bytes();
    put_u64(bytes, at + 40, ~uint64_t{0});
    CHECK(contains(read_error(bytes), "does not fit"));
  }
  SUBCASE("a CODE_LOAD shorter than its fixed part") {
    Builder b;
    b.raw(0, 40, 1, std::vector<uint8_t>(24, 1));
    CHECK(contains(read_error(b.bytes()), "below the record's fixed"));
  }
  SUBCASE("nr_entry beyond what the record can hold") {
    Builder b;
    b.debug(0x1000, {{0x1000, 1, 0, "f.js"}}).load(1, 0x1000, 4, 1, "f");
    std::vector<uint8_t> bytes = b.bytes();
    put_u64(bytes, at + 24, uint64_t{1} << 60);
    CHECK(contains(read_error(bytes), "nr_entry"));
  }
  SUBCASE("a file name running past the record") {
    Builder b;
    b.debug(0x1000, {{0x1000, 1, 0, "f.js"}, {0x1004, 2, 0, "g.js"}});
    std::vector<uint8_t> bytes = b.bytes();
    // 74 bytes padded to 80: "g.js"'s NUL and the padding become text.
    REQUIRE(bytes.size() == at + 80);
    for (size_t i = bytes.size() - 7; i < bytes.size(); ++i) bytes[i] = 'x';
    CHECK(contains(read_error(bytes),
                   "DEBUG_INFO at offset 40: entry 1: the file name runs"));
  }
  SUBCASE("unwinding_size beyond the record") {
    Builder b;
    b.unwind(kCpythonUnwind, 20, 80);
    std::vector<uint8_t> bytes = b.bytes();
    put_u64(bytes, at + 16, 4096);
    CHECK(contains(read_error(bytes), "unwinding_size 4096"));
  }
  SUBCASE("eh_frame_hdr_size beyond unwinding_size") {
    Builder b;
    b.unwind(kCpythonUnwind, 20, 80);
    std::vector<uint8_t> bytes = b.bytes();
    put_u64(bytes, at + 24, 69);
    CHECK(contains(read_error(bytes), "eh_frame_hdr_size 69"));
  }
  SUBCASE("a CODE_MOVE shorter than its fixed part") {
    Builder b;
    b.raw(1, 32, 1, std::vector<uint8_t>(16, 0));
    CHECK(contains(read_error(b.bytes()), "CODE_MOVE at offset 40"));
  }
}

TEST_CASE("jitdump: rejected headers") {
  SUBCASE("bad magic") {
    Builder b(0, 40, 0x12345678);
    CHECK(contains(read_error(b.bytes()), "jitdump: bad magic 0x12345678"));
    // Even before the rest of the header is there.
    std::vector<uint8_t> start = b.bytes();
    start.resize(4);
    CHECK(contains(read_error(start), "bad magic"));
  }
  SUBCASE("byte-swapped magic") {
    Builder b(0, 40, kJitDumpMagicSwapped);
    CHECK(contains(read_error(b.bytes()), "byte-swapped"));
  }
  SUBCASE("reserved flags") {
    Builder b(2);
    CHECK(contains(read_error(b.bytes()), "reserved flag bits"));
    Builder high(uint64_t{1} << 63);
    CHECK(contains(read_error(high.bytes()), "reserved flag bits"));
  }
  SUBCASE("header total_size") {
    CHECK(contains(read_error(Builder(0, 39).bytes()), "total_size 39"));
    CHECK(contains(read_error(Builder(0, 100000).bytes()), "total_size"));
  }
  SUBCASE("a newer version") {
    CHECK(contains(read_error(Builder(0, 40, kJitDumpMagic, 2).bytes()),
                   "version 2"));
  }
  SUBCASE("a longer header is skipped") {
    Builder b(0, 64);
    b.load(1, 0x1000, 4, 1, "f");
    const JitDump dump = read_ok(b.bytes());
    CHECK(dump.code.size() == 1);
    // ... and, cut inside it, is an unfinished file.
    std::vector<uint8_t> part = b.bytes();
    part.resize(50);
    const JitDump cut = read_ok(part);
    CHECK(cut.truncated);
    CHECK(cut.bytes_used == 0);
  }
}

TEST_CASE("jitdump: names are capped") {
  Builder b;
  const std::string long_name(kMaxJitNameLength + 10, 'n');
  b.debug(0, {{0, 1, 0, long_name}}).load(1, 0x1000, 4, 1, long_name);
  const JitDump dump = read_ok(b.bytes());
  REQUIRE(dump.code.size() == 1);
  CHECK(dump.code[0].name.size() == kMaxJitNameLength);
  CHECK(dump.file(dump.code[0].lines[0]).size() == kMaxJitNameLength);
  CHECK(dump.truncated_names == 2);
}

TEST_CASE("jit_unwind_data: the CFI where the producers expect the code") {
  SUBCASE("CPython 3.13 trampoline") {
    Builder b;
    b.unwind(kCpythonUnwind, 20, 80)
        .load(1, 0x7f0000001000, kCpythonCodeSize, 1, "py::f:x.py");
    const JitDump dump = read_ok(b.bytes());
    REQUIRE(dump.code.size() == 1);
    check_unwind_placement(dump.code[0], true);
    const UnwindData data = jit_unwind_data(dump.code[0]);
    CHECK(data.path == "jitted-7-1.so");
    CHECK(data.eh_frame_svma == Range{16, 64});
    CHECK(data.eh_frame_hdr_svma == Range{64, 84});
  }
  SUBCASE("V8 TurboFan body") {
    Builder b;
    b.unwind(kV8Unwind, 20, 88)
        .load(1, 0x7f0000005bc0, kV8CodeSize, 3, "JS:*f");
    const JitDump dump = read_ok(b.bytes());
    REQUIRE(dump.code.size() == 1);
    check_unwind_placement(dump.code[0], false);
  }
  SUBCASE("no unwind info, or V8's empty hdr") {
    Builder b;
    b.load(1, 0x1000, 5, 1, "bare")
        .unwind(from_hex("011b033b00000000000000000000000000000000"), 20, 0)
        .load(2, 0x2000, 5, 2, "fp only");
    const JitDump dump = read_ok(b.bytes());
    REQUIRE(dump.code.size() == 2);
    for (const JitCode& code : dump.code) {
      const UnwindData data = jit_unwind_data(code);
      CHECK(data.eh_frame.empty());
      CHECK_FALSE(data.eh_frame_hdr.has_value());
      CHECK(data.eh_frame_svma == Range{8, 8});
    }
    REQUIRE(dump.code[1].unwind.has_value());
    CHECK(dump.code[1].unwind->mapped_size == 0);
  }
}

// ---- real dumps ------------------------------------------------------------

JitDump read_real(const testing::JitDumpRun& run) {
  JitDump dump = read_ok(run.bytes);
  CHECK_FALSE(dump.truncated);
  CHECK(dump.bytes_used == run.bytes.size());
  CHECK(dump.unknown_records == 0);
  CHECK(dump.pid == static_cast<uint32_t>(run.pid));
  return dump;
}

const JitCode* find_code(const JitDump& dump, std::string_view part) {
  for (const JitCode& code : dump.code)
    if (code.name.find(part) != std::string::npos) return &code;
  return nullptr;
}

TEST_CASE("jitdump: a real dump of node --perf-prof") {
  const testing::JitDumpRun run = testing::node_perf_prof_dump(
      "function runnerJitdumpProbe(x) { return x * 2 + 1; }\n"
      "let s = 0;\n"
      "for (let i = 0; i < 1e7; i++) s += runnerJitdumpProbe(i);\n"
      "if (s < 0) console.log(s);\n");
  if (!run.skip.empty()) RUNNER_SKIP_CASE(run.skip);
  const JitDump dump = read_real(run);
  CHECK(dump.code.size() > 100);
  const JitCode* probe = find_code(dump, "runnerJitdumpProbe");
  REQUIRE(probe != nullptr);
  CHECK(probe->code_size > 0);
  // Source lines name the script; the CFI V8 wrote (TurboFan code) places
  // the code at svma 0.
  bool lines = false;
  size_t with_cfi = 0;
  for (const JitCode& code : dump.code) {
    for (const JitLine& line : code.lines) {
      REQUIRE(line.file < dump.files.size());
      lines = lines || dump.file(line) == "[eval]";
    }
    if (!code.unwind || code.unwind->eh_frame.empty()) continue;
    ++with_cfi;
    check_unwind_placement(code, false);
  }
  CHECK(lines);
  CHECK(with_cfi > 0);
}

TEST_CASE("jitdump: a real dump of python3.13 -X perf_jit") {
  const testing::JitDumpRun run = testing::python_perf_jit_dump(
      "def my_func(n):\n"
      "    return n * 2\n"
      "s = 0\n"
      "for i in range(1000):\n"
      "    s += my_func(i)\n");
  if (!run.skip.empty()) RUNNER_SKIP_CASE(run.skip);
  const JitDump dump = read_real(run);
  const JitCode* probe = find_code(dump, "py::my_func:");
  REQUIRE(probe != nullptr);
  CHECK(probe->name.starts_with("py::my_func:"));
  CHECK(dump.code.front().code_index == 1);
  for (const JitCode& code : dump.code) {
    REQUIRE(code.unwind.has_value());
    CHECK(code.unwind->eh_frame_hdr.size() == 20);
    const uint64_t size =
        code.unwind->eh_frame.size() + code.unwind->eh_frame_hdr.size();
    CHECK(code.unwind->mapped_size == (size + 15) / 16 * 16);
    check_unwind_placement(code, true);
  }
}

}  // namespace
}  // namespace runner::format
