#include "format/unwind_data.hpp"

#include "format/bytes.hpp"

namespace runner::format {
namespace {

constexpr uint32_t kTagV1 = 0, kTagV2 = 1, kTagV3 = 2, kTagV4 = 3;

// bincode's Vec<u8>/String: u64 length, then the bytes.
void write_bytes(ByteWriter& w, std::span<const uint8_t> bytes) {
  w.u64(bytes.size());
  w.bytes(bytes);
}

void write_range(ByteWriter& w, const Range& r) {
  w.u64(r.start);
  w.u64(r.end);
}

std::vector<uint8_t> read_bytes(ByteReader& r) {
  std::span<const uint8_t> bytes = r.bytes(r.u64());
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

Range read_range(ByteReader& r) {
  Range out;
  out.start = r.u64();
  out.end = r.u64();
  return out;
}

// Option<T>: 0 = None, 1 = Some(T); any other tag fails the reader.
bool read_option_tag(ByteReader& r) {
  uint8_t tag = r.u8();
  if (tag > 1) r.fail();
  return tag == 1 && r.ok();
}

// The fields V3 and V4 share before and after the header, and V4's
// optional header (V3 always had one).
void read_header_fields(ByteReader& r, uint32_t tag, UnwindData& out) {
  if (tag == kTagV3) {
    out.eh_frame_hdr = read_bytes(r);
    out.eh_frame_hdr_svma = read_range(r);
    return;
  }
  if (read_option_tag(r)) out.eh_frame_hdr = read_bytes(r);
  if (read_option_tag(r)) out.eh_frame_hdr_svma = read_range(r);
}

}  // namespace

std::vector<uint8_t> encode_unwind_data(const UnwindData& data) {
  ByteWriter w;
  w.reserve(64 + data.path.size() + data.eh_frame.size() +
            (data.eh_frame_hdr ? data.eh_frame_hdr->size() : 0));
  w.u32(kTagV4);
  w.u64(data.path.size());
  w.bytes(data.path);
  w.u64(data.base_svma);
  w.u8(data.eh_frame_hdr ? 1 : 0);
  if (data.eh_frame_hdr) write_bytes(w, *data.eh_frame_hdr);
  w.u8(data.eh_frame_hdr_svma ? 1 : 0);
  if (data.eh_frame_hdr_svma) write_range(w, *data.eh_frame_hdr_svma);
  write_bytes(w, data.eh_frame);
  write_range(w, data.eh_frame_svma);
  return w.take();
}

base::Result<UnwindData> decode_unwind_data(std::span<const uint8_t> bytes) {
  ByteReader r(bytes);
  uint32_t tag = r.u32();
  if (!r.ok()) return base::Error("unwind data: truncated version tag");
  if (tag == kTagV1 || tag == kTagV2) {
    return base::Error("unwind data: version V" + std::to_string(tag + 1) +
                       " is not supported (breaking changes), need V3 or V4");
  }
  if (tag != kTagV3 && tag != kTagV4) {
    return base::Error("unwind data: unknown version tag " +
                       std::to_string(tag));
  }
  UnwindData out;
  std::span<const uint8_t> path = r.bytes(r.u64());
  out.path.assign(path.begin(), path.end());
  out.base_svma = r.u64();
  read_header_fields(r, tag, out);
  out.eh_frame = read_bytes(r);
  out.eh_frame_svma = read_range(r);
  if (!r.ok()) return base::Error("unwind data: truncated or malformed");
  return out;
}

}  // namespace runner::format
