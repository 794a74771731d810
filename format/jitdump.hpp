// jit-<pid>.dump: the jitdump a JIT runtime (Node.js/V8 --perf-prof,
// CPython 3.13+ -X perf_jit, ...) writes for perf inject --jit. Read only:
// every jitted body with its name, source lines and CFI.
//
// Layout (perf's tools/perf/Documentation/jitdump-specification.txt and
// tools/perf/util/jitdump.h, torvalds/linux): little-endian here, a 40-byte
// file header {u32 magic 0x4A695444, u32 version (1), u32 total_size,
// u32 elf_mach, u32 pad1, u32 pid, u64 timestamp, u64 flags}, then records
// of a 16-byte prefix {u32 id, u32 total_size (prefix included), u64
// timestamp} and their payload, without padding between records:
//  - CODE_LOAD (0): u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size,
//    u64 code_index, the NUL-terminated name, and the code_size bytes of
//    code at the END of the record (perf reads them at record start +
//    total_size - code_size).
//  - CODE_MOVE (1): u32 pid, u32 tid, u64 vma, u64 old_code_addr,
//    u64 new_code_addr, u64 code_size, u64 code_index (that of the LOAD).
//  - DEBUG_INFO (2): u64 code_addr, u64 nr_entry, then nr_entry entries
//    {u64 addr, u32 line, u32 discrim (V8: column), NUL-terminated file
//    name, "\xff" meaning the file of the previous entry}; counted by
//    nr_entry, as the record may be padded.
//  - CLOSE (3): the prefix only.
//  - UNWINDING_INFO (4): u64 unwinding_size, u64 eh_frame_hdr_size,
//    u64 mapped_size, then unwinding_size bytes: .eh_frame FIRST, then the
//    .eh_frame_hdr (its last eh_frame_hdr_size bytes). perf's jitdump text says
//    the reverse; perf's jit_add_eh_frame_info (tools/perf/util/genelf.c),
//    CPython (Python/perf_jit_trampoline.c) and V8 (src/diagnostics/
//    eh-frame.cc, EhFrameWriter::Finish then WriteEhFrameHdr) all use this
//    order.
// DEBUG_INFO and UNWINDING_INFO describe the NEXT CODE_LOAD (perf's
// jit_process_dump buffers them; a second one before the LOAD replaces the
// first).
//
// Where the CFI expects the code (what jit_unwind_data() encodes). perf
// inject writes one ELF per LOAD (genelf.c jit_write_elf): .text at
// GEN_ELF_TEXT_OFFSET (= sizeof(Elf64_Ehdr) = 64, tools/perf/util/genelf.h),
// .eh_frame at ALIGN_8(GEN_ELF_TEXT_OFFSET + code_size) and .eh_frame_hdr
// right after the .eh_frame; the MMAP2 it injects maps that file offset 64
// at code_addr. So, relative to the start of the code, .eh_frame is at
// ALIGN_8(code_size) (64 is 8-aligned) and the hdr at ALIGN_8(code_size) +
// the .eh_frame's size. The producers write pc-relative pointers for exactly
// that layout:
//  - CPython (Python/perf_jit_trampoline.c, elf_init_ehframe and
//    perf_map_jit_write_entry): FDE initial_location (pcrel|sdata4) =
//    -(round_up(code_size, 8) + offset of that field in the .eh_frame);
//    hdr eh_frame_ptr (pcrel|sdata4) = -(eh_frame_size + 4); table entry
//    initial_location (datarel|sdata4, from the hdr start) =
//    -(round_up(code_size, 8) + eh_frame_size) and fde = -(eh_frame_size -
//    CIE size). A real 3.13.0 x86-64 dump has -0x30 in that FDE field:
//    round_up(11, 8) + 32 for its 11-byte trampoline, the same rule. Its
//    header has elf_mach 0 and a non-zero pad1 (also seen in that dump).
//  - V8 (src/diagnostics/eh-frame.cc, EhFrameWriter::Finish and
//    WriteEhFrameHdr): procedure address = -(RoundUp(code_size, 8) + offset
//    of the field), the same hdr fields, a 4-byte zero terminator ending the
//    .eh_frame; a body without CFI gets unwinding_size = 20 (only an empty
//    hdr) and mapped_size 0 (src/diagnostics/perf-jit.cc,
//    LogWriteUnwindingInfo). Its header's pad1 is 0xDEADBEEF, and its
//    DEBUG_INFO addresses are code address + offset + 64 (kElfHeaderSize:
//    the address in perf's ELF, since perf's genelf_debug.c subtracts
//    code_addr); JitLine::addr keeps the value as written.
//
// Reading policy:
//  - A file that ends inside a record (or inside the header) is read up to
//    its last whole record: `truncated` is set and `bytes_used` says where
//    whole records end. That is how a file still being written looks; it is
//    never an error. A zero-filled tail (a record prefix with total_size < 16
//    and nothing but zeros to the end) is the same.
//  - A whole record that lies (total_size < 16 with non-zero bytes after it,
//    or a payload whose sizes do not fit its total_size) is an error
//    wherever it is: a record whose bytes are all there was written wrong.
//  - Rejected: a bad magic, a byte-swapped magic 0x4454694A (a big-endian
//    writer; not supported), version > 1 (as perf), header total_size < 40
//    or > kMaxJitHeaderSize, reserved flag bits (as perf). pad1 and elf_mach
//    are not checked (producers write garbage there).
//  - Records of unknown id are skipped by total_size and counted; records
//    after CLOSE are still read (perf does too).
//  - Code bytes are checked to fit but never kept. Names (and source file
//    names) longer than kMaxJitNameLength are cut there and counted.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "format/unwind_data.hpp"

namespace runner::format {

inline constexpr uint32_t kJitDumpMagic = 0x4A695444;
inline constexpr uint32_t kJitDumpMagicSwapped = 0x4454694A;
inline constexpr uint32_t kJitHeaderSize = 40;
inline constexpr uint32_t kMaxJitHeaderSize = 4096;
inline constexpr uint32_t kJitRecordPrefixSize = 16;
inline constexpr uint64_t kJitFlagArchTimestamp = 1;  // timestamps are TSC
inline constexpr size_t kMaxJitNameLength = 64 * 1024;

enum class JitRecordId : uint32_t {
  kCodeLoad = 0,
  kCodeMove = 1,
  kDebugInfo = 2,
  kClose = 3,
  kUnwindingInfo = 4,
};

struct JitLine {
  uint64_t addr = 0;    // as written (V8: code address + offset + 64)
  uint32_t line = 0;    // 1-based
  uint32_t column = 0;  // perf's "discrim", V8's column
  uint32_t file = 0;    // index into JitDump::files ("\xff" resolved)
  bool operator==(const JitLine&) const = default;
};

// One UNWINDING_INFO, split as perf does (.eh_frame first).
struct JitUnwind {
  std::vector<uint8_t> eh_frame;
  std::vector<uint8_t> eh_frame_hdr;
  uint64_t mapped_size = 0;  // 0: not mapped (V8: no CFI, use frame pointers)
};

// A CODE_MOVE: from `timestamp` on, the body is at new_code_addr.
struct JitMove {
  uint64_t timestamp = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, old_code_addr = 0, new_code_addr = 0;
};

struct JitCode {
  uint64_t timestamp = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t vma = 0, code_addr = 0, code_size = 0, code_index = 0;
  std::string name;
  std::vector<JitLine> lines;       // the DEBUG_INFO before this LOAD
  std::optional<JitUnwind> unwind;  // the UNWINDING_INFO before this LOAD
  std::vector<JitMove> moves;       // in file order: each a new range
};

struct JitDump {
  uint32_t version = 0, elf_mach = 0, pid = 0;
  uint64_t timestamp = 0, flags = 0;
  std::vector<JitCode> code;       // one per CODE_LOAD, in file order
  std::vector<std::string> files;  // source files, JitLine::file indexes
  std::optional<uint64_t> closed;  // timestamp of the first CLOSE
  uint64_t unknown_records = 0;    // skipped: id >= 5
  uint64_t unmatched_moves = 0;    // no earlier LOAD, or another code_size
  uint64_t unused_records = 0;     // DEBUG/UNWINDING_INFO no LOAD consumed
  uint64_t truncated_names = 0;    // cut at kMaxJitNameLength
  bool truncated = false;          // ends inside the header or a record
  uint64_t bytes_used = 0;         // end of the last whole record

  bool arch_timestamp() const { return (flags & kJitFlagArchTimestamp) != 0; }
  const std::string& file(const JitLine& line) const {
    return files[line.file];
  }
};

base::Result<JitDump> read_jitdump(std::span<const uint8_t> bytes);

// The CFI of one body for report/'s unwinder: the code at SVMA
// [0, code_size) (base_svma 0: a sample's SVMA is avma - code_addr, the
// start of the MMAP2 perf inject makes, or avma - new_code_addr after a
// move; CPython and V8 write vma == code_addr), .eh_frame at
// ALIGN_8(code_size) and .eh_frame_hdr right after it, where the producers'
// pc-relative pointers expect them (see the top of this file). path is perf
// inject's name for the body, "jitted-<pid>-<code_index>.so". A body
// without unwind info, or with an empty .eh_frame (V8's "no CFI"), gets an
// empty eh_frame and no hdr.
UnwindData jit_unwind_data(const JitCode& code);

}  // namespace runner::format
