#include "format/jitdump.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "base/base.hpp"
#include "format/bytes.hpp"

namespace runner::format {
namespace {

// Fixed parts of the records, prefix included.
constexpr uint64_t kLoadFixed = 56;
constexpr uint64_t kMoveFixed = 64;
constexpr uint64_t kDebugFixed = 32;
constexpr uint64_t kDebugEntryMin = 17;  // addr, line, column, the NUL
constexpr uint64_t kUnwindFixed = 40;

std::string hex(uint64_t v) { return "0x" + base::hex_number(v); }

const char* record_name(uint32_t id) {
  switch (static_cast<JitRecordId>(id)) {
    case JitRecordId::kCodeLoad:
      return "CODE_LOAD";
    case JitRecordId::kCodeMove:
      return "CODE_MOVE";
    case JitRecordId::kDebugInfo:
      return "DEBUG_INFO";
    case JitRecordId::kClose:
      return "CODE_CLOSE";
    case JitRecordId::kUnwindingInfo:
      return "UNWINDING_INFO";
  }
  return "unknown record";
}

// The NUL-terminated string at the start of `bytes` (nullopt without a
// NUL), cut at kMaxJitNameLength; *size is what it spans, NUL included.
std::optional<std::string> c_string(std::span<const uint8_t> bytes,
                                    uint64_t* size, bool* cut) {
  const auto nul = std::find(bytes.begin(), bytes.end(), uint8_t{0});
  if (nul == bytes.end()) return std::nullopt;
  const size_t length = static_cast<size_t>(nul - bytes.begin());
  *size = length + 1;
  *cut = length > kMaxJitNameLength;
  const size_t kept = std::min(length, kMaxJitNameLength);
  return std::string(reinterpret_cast<const char*>(bytes.data()), kept);
}

// What the records before a CODE_LOAD left for it, and the index of the
// LOADs by code_index for the MOVEs.
class Parser {
 public:
  explicit Parser(JitDump& out) : out_(out) {}

  base::Status record(uint32_t id, uint64_t timestamp,
                      std::span<const uint8_t> record);
  void finish() {
    if (pending_lines_) ++out_.unused_records;
    if (pending_unwind_) ++out_.unused_records;
  }

 private:
  base::Status load(uint64_t timestamp, std::span<const uint8_t> record);
  void move(uint64_t timestamp, std::span<const uint8_t> record);
  base::Status debug_info(std::span<const uint8_t> record);
  base::Status unwinding_info(std::span<const uint8_t> record);
  base::Status debug_entry(ByteReader& r, std::span<const uint8_t> record,
                           std::vector<JitLine>& lines);
  uint32_t file_id(std::string name);

  JitDump& out_;
  std::optional<std::vector<JitLine>> pending_lines_;
  std::optional<JitUnwind> pending_unwind_;
  std::unordered_map<uint64_t, size_t> by_index_;
  std::unordered_map<std::string, uint32_t> file_ids_;
};

base::Status too_short(uint64_t total, uint64_t fixed) {
  return base::Error("total_size " + std::to_string(total) +
                     " is below the record's fixed " + std::to_string(fixed) +
                     " bytes");
}

base::Status Parser::record(uint32_t id, uint64_t timestamp,
                            std::span<const uint8_t> record) {
  switch (static_cast<JitRecordId>(id)) {
    case JitRecordId::kCodeLoad:
      return load(timestamp, record);
    case JitRecordId::kCodeMove:
      if (record.size() < kMoveFixed)
        return too_short(record.size(), kMoveFixed);
      move(timestamp, record);
      return {};
    case JitRecordId::kDebugInfo:
      return debug_info(record);
    case JitRecordId::kClose:
      if (!out_.closed) out_.closed = timestamp;
      return {};
    case JitRecordId::kUnwindingInfo:
      return unwinding_info(record);
  }
  ++out_.unknown_records;
  return {};
}

base::Status Parser::load(uint64_t timestamp, std::span<const uint8_t> record) {
  if (record.size() < kLoadFixed + 1)
    return too_short(record.size(), kLoadFixed + 1);
  ByteReader r(record);
  r.skip(kJitRecordPrefixSize);
  JitCode code;
  code.timestamp = timestamp;
  code.pid = r.u32();
  code.tid = r.u32();
  code.vma = r.u64();
  code.code_addr = r.u64();
  code.code_size = r.u64();
  code.code_index = r.u64();
  // The code is the record's last code_size bytes; the name is before it.
  const uint64_t room = record.size() - kLoadFixed;
  if (code.code_size > room - 1)
    return base::Error("code_size " + std::to_string(code.code_size) +
                       " does not fit with a name in the record's " +
                       std::to_string(record.size()) + " bytes");
  uint64_t name_size = 0;
  bool cut = false;
  auto name = c_string(record.subspan(kLoadFixed, room - code.code_size),
                       &name_size, &cut);
  if (!name) return base::Error("the name has no NUL before the code");
  code.name = std::move(*name);
  if (cut) ++out_.truncated_names;
  if (pending_lines_) code.lines = std::move(*pending_lines_);
  code.unwind = std::move(pending_unwind_);
  pending_lines_.reset();
  pending_unwind_.reset();
  by_index_[code.code_index] = out_.code.size();
  out_.code.push_back(std::move(code));
  return {};
}

void Parser::move(uint64_t timestamp, std::span<const uint8_t> record) {
  ByteReader r(record);
  r.skip(kJitRecordPrefixSize);
  JitMove m;
  m.timestamp = timestamp;
  m.pid = r.u32();
  m.tid = r.u32();
  m.vma = r.u64();
  m.old_code_addr = r.u64();
  m.new_code_addr = r.u64();
  const uint64_t code_size = r.u64();
  const uint64_t code_index = r.u64();
  auto it = by_index_.find(code_index);
  if (it == by_index_.end() || out_.code[it->second].code_size != code_size) {
    ++out_.unmatched_moves;
    return;
  }
  out_.code[it->second].moves.push_back(m);
}

uint32_t Parser::file_id(std::string name) {
  auto [it, added] = file_ids_.try_emplace(
      std::move(name), static_cast<uint32_t>(out_.files.size()));
  if (added) out_.files.push_back(it->first);
  return it->second;
}

base::Status Parser::debug_entry(ByteReader& r, std::span<const uint8_t> record,
                                 std::vector<JitLine>& lines) {
  JitLine line;
  line.addr = r.u64();
  line.line = r.u32();
  line.column = r.u32();
  if (!r.ok())
    return base::Error("entry " + std::to_string(lines.size()) +
                       " runs past the record");
  uint64_t size = 0;
  bool cut = false;
  auto name = c_string(record.subspan(r.pos()), &size, &cut);
  if (!name)
    return base::Error("entry " + std::to_string(lines.size()) +
                       ": the file name runs past the record");
  r.skip(size);
  if (cut) ++out_.truncated_names;
  if (*name == "\xff")  // same file as the previous entry ("" for the first)
    line.file = lines.empty() ? file_id("") : lines.back().file;
  else
    line.file = file_id(std::move(*name));
  lines.push_back(line);
  return {};
}

base::Status Parser::debug_info(std::span<const uint8_t> record) {
  if (record.size() < kDebugFixed) return too_short(record.size(), kDebugFixed);
  ByteReader r(record);
  r.skip(kJitRecordPrefixSize);
  r.u64();  // code_addr: perf attaches the entries to the next LOAD
  const uint64_t count = r.u64();
  if (!r.fits(count, kDebugEntryMin))
    return base::Error("nr_entry " + std::to_string(count) +
                       " entries cannot fit in the record's " +
                       std::to_string(record.size()) + " bytes");
  std::vector<JitLine> lines;
  lines.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    base::Status entry = debug_entry(r, record, lines);
    if (!entry) return entry;
  }
  if (pending_lines_) ++out_.unused_records;
  pending_lines_ = std::move(lines);
  return {};
}

base::Status Parser::unwinding_info(std::span<const uint8_t> record) {
  if (record.size() < kUnwindFixed)
    return too_short(record.size(), kUnwindFixed);
  ByteReader r(record);
  r.skip(kJitRecordPrefixSize);
  const uint64_t size = r.u64();
  const uint64_t hdr_size = r.u64();
  JitUnwind unwind;
  unwind.mapped_size = r.u64();
  if (size > record.size() - kUnwindFixed)
    return base::Error(
        "unwinding_size " + std::to_string(size) + " exceeds the record's " +
        std::to_string(record.size() - kUnwindFixed) + " bytes of data");
  if (hdr_size > size)
    return base::Error("eh_frame_hdr_size " + std::to_string(hdr_size) +
                       " exceeds unwinding_size " + std::to_string(size));
  auto data = record.subspan(kUnwindFixed, size);
  auto eh_frame = data.first(size - hdr_size);
  auto hdr = data.subspan(size - hdr_size);
  unwind.eh_frame.assign(eh_frame.begin(), eh_frame.end());
  unwind.eh_frame_hdr.assign(hdr.begin(), hdr.end());
  if (pending_unwind_) ++out_.unused_records;
  pending_unwind_ = std::move(unwind);
  return {};
}

bool all_zero(std::span<const uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(),
                     [](uint8_t b) { return b == 0; });
}

// The file header; *records is where the records start (0 when the header
// is not all there yet: then out.truncated is set).
base::Status read_header(std::span<const uint8_t> bytes, JitDump& out,
                         size_t* records) {
  *records = 0;
  if (bytes.size() >= 4) {
    const uint64_t magic = load_le(bytes, 0, 4);
    if (magic == kJitDumpMagicSwapped)
      return base::Error(
          "byte-swapped magic (written on a big-endian machine); not "
          "supported");
    if (magic != kJitDumpMagic)
      return base::Error("bad magic " + hex(magic) + " (expected " +
                         hex(kJitDumpMagic) + ", \"JiTD\")");
  }
  if (bytes.size() < kJitHeaderSize) {
    out.truncated = true;
    return {};
  }
  ByteReader r(bytes);
  r.skip(4);
  out.version = r.u32();
  const uint32_t header_size = r.u32();
  out.elf_mach = r.u32();
  r.u32();  // pad1: V8 writes 0xDEADBEEF, CPython 3.13.0 leaves it unset
  out.pid = r.u32();
  out.timestamp = r.u64();
  out.flags = r.u64();
  if (out.version > 1)
    return base::Error("version " + std::to_string(out.version) +
                       "; only version 1 is supported");
  if (header_size < kJitHeaderSize || header_size > kMaxJitHeaderSize)
    return base::Error("header total_size " + std::to_string(header_size) +
                       " (expected 40 to " + std::to_string(kMaxJitHeaderSize) +
                       ")");
  if ((out.flags & ~kJitFlagArchTimestamp) != 0)
    return base::Error("reserved flag bits set (flags " + hex(out.flags) + ")");
  if (header_size > bytes.size()) {
    out.truncated = true;
    return {};
  }
  *records = header_size;
  return {};
}

std::string where(uint32_t id, size_t pos) {
  return std::string(record_name(id)) + " at offset " + std::to_string(pos);
}

// Walks the records from `pos`; stops at the end, or before a record that
// is not all there (truncated).
base::Status read_records(std::span<const uint8_t> bytes, size_t pos,
                          JitDump& out) {
  Parser parser(out);
  while (pos < bytes.size()) {
    const size_t left = bytes.size() - pos;
    const uint32_t total = static_cast<uint32_t>(load_le(bytes, pos + 4, 4));
    const bool prefix_whole = left >= kJitRecordPrefixSize;
    if (!prefix_whole ||
        (total < kJitRecordPrefixSize && all_zero(bytes.subspan(pos))) ||
        total > left) {
      out.truncated = true;
      break;
    }
    const uint32_t id = static_cast<uint32_t>(load_le(bytes, pos, 4));
    if (total < kJitRecordPrefixSize)
      return base::Error(where(id, pos) + ": total_size " +
                         std::to_string(total) +
                         " is below the 16-byte prefix");
    RUNNER_RETURN_IF_ERROR(parser.record(id, load_le(bytes, pos + 8, 8),
                                         bytes.subspan(pos, total)),
                           where(id, pos));
    pos += total;
    out.bytes_used = pos;
  }
  parser.finish();
  return {};
}

}  // namespace

base::Result<JitDump> read_jitdump(std::span<const uint8_t> bytes) {
  JitDump out;
  size_t records = 0;
  RUNNER_RETURN_IF_ERROR(read_header(bytes, out, &records), "jitdump");
  if (records == 0) return out;  // the header is not all there yet
  out.bytes_used = records;
  RUNNER_RETURN_IF_ERROR(read_records(bytes, records, out), "jitdump");
  return out;
}

UnwindData jit_unwind_data(const JitCode& code) {
  UnwindData out;
  out.path = "jitted-" + std::to_string(code.pid) + "-" +
             std::to_string(code.code_index) + ".so";
  out.base_svma = 0;
  // Where perf's genelf.c puts .eh_frame relative to the text, and where
  // the producers' pc-relative FDE pointers expect it.
  const uint64_t eh_frame_svma = (code.code_size + 7) & ~uint64_t{7};
  out.eh_frame_svma = {eh_frame_svma, eh_frame_svma};
  if (!code.unwind || code.unwind->eh_frame.empty()) return out;
  out.eh_frame = code.unwind->eh_frame;
  out.eh_frame_svma.end = eh_frame_svma + out.eh_frame.size();
  if (!code.unwind->eh_frame_hdr.empty()) {
    out.eh_frame_hdr = code.unwind->eh_frame_hdr;
    out.eh_frame_hdr_svma =
        Range{out.eh_frame_svma.end,
              out.eh_frame_svma.end + code.unwind->eh_frame_hdr.size()};
  }
  return out;
}

}  // namespace runner::format
