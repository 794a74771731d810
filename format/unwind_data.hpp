// <key>.unwind_data: bincode 1.x of the Rust enum UnwindDataCompat
// (docs/formats.md, "Unwind data"), written by symbols/ for each module and
// read by report/. Fixed-width little-endian integers, u32 enum variant index
// (= format version - 1), u64 length prefixes for String/Vec, u8 0/1 tag for
// Option, Range<u64> as two u64.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"

namespace runner::format {

struct Range {
  uint64_t start = 0, end = 0;
  bool operator==(const Range&) const = default;
};

// Pid-agnostic unwind tables of one file (bincode UnwindData V4).
struct UnwindData {
  std::string path;  // path string as recorded in MMAP2
  uint64_t base_svma = 0;
  std::optional<std::vector<uint8_t>> eh_frame_hdr;
  std::optional<Range> eh_frame_hdr_svma;
  std::vector<uint8_t> eh_frame;
  Range eh_frame_svma;
};

// bincode 1.x (fixint, little endian): u32 variant tag 3 (V4), then fields.
std::vector<uint8_t> encode_unwind_data(const UnwindData& data);
// Accepts V4 and V3 (upgraded: hdr wrapped in Some); rejects V1/V2 and any
// truncated or inconsistent input. Trailing bytes are ignored, as bincode's
// default deserializer does.
base::Result<UnwindData> decode_unwind_data(std::span<const uint8_t> bytes);

}  // namespace runner::format
