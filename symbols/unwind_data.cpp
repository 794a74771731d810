// <key>.unwind_data: bincode 1.x of the Rust enum UnwindDataCompat (spec
// §4.4). Fixed-width little-endian integers, u32 enum variant index (= format
// version - 1), u64 length prefixes for String/Vec, u8 0/1 tag for Option,
// Range<u64> as two u64.
#include <cstring>

#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

constexpr uint32_t kTagV1 = 0, kTagV2 = 1, kTagV3 = 2, kTagV4 = 3;

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void bytes(const void* data, size_t size) {
    u64(size);
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void range(const Range& r) {
    u64(r.start);
    u64(r.end);
  }
  std::vector<uint8_t> take() { return std::move(out_); }
  void reserve(size_t n) { out_.reserve(n); }

 private:
  std::vector<uint8_t> out_;
};

// Every read checks the remaining length first, so truncated or corrupt
// input (including absurd length prefixes) fails cleanly without allocating.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> in) : in_(in) {}

  bool u8(uint8_t* v) {
    if (in_.size() < 1) return false;
    *v = in_[0];
    in_ = in_.subspan(1);
    return true;
  }
  bool u32(uint32_t* v) {
    if (in_.size() < 4) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i) *v |= uint32_t{in_[i]} << (8 * i);
    in_ = in_.subspan(4);
    return true;
  }
  bool u64(uint64_t* v) {
    if (in_.size() < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{in_[i]} << (8 * i);
    in_ = in_.subspan(8);
    return true;
  }
  bool bytes(std::vector<uint8_t>* v) {
    uint64_t len = 0;
    if (!u64(&len) || len > in_.size()) return false;
    v->assign(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(len));
    in_ = in_.subspan(len);
    return true;
  }
  bool string(std::string* v) {
    uint64_t len = 0;
    if (!u64(&len) || len > in_.size()) return false;
    v->assign(reinterpret_cast<const char*>(in_.data()), len);
    in_ = in_.subspan(len);
    return true;
  }
  bool range(Range* r) { return u64(&r->start) && u64(&r->end); }
  // Option<T>: 0 = None, 1 = Some(T); any other tag is invalid.
  bool option_tag(bool* some) {
    uint8_t tag = 0;
    if (!u8(&tag) || tag > 1) return false;
    *some = tag == 1;
    return true;
  }

 private:
  std::span<const uint8_t> in_;
};

}  // namespace

std::vector<uint8_t> encode_unwind_data(const UnwindData& data) {
  Writer w;
  w.reserve(64 + data.path.size() + data.eh_frame.size() +
            (data.eh_frame_hdr ? data.eh_frame_hdr->size() : 0));
  w.u32(kTagV4);
  w.bytes(data.path.data(), data.path.size());
  w.u64(data.base_svma);
  w.u8(data.eh_frame_hdr ? 1 : 0);
  if (data.eh_frame_hdr)
    w.bytes(data.eh_frame_hdr->data(), data.eh_frame_hdr->size());
  w.u8(data.eh_frame_hdr_svma ? 1 : 0);
  if (data.eh_frame_hdr_svma) w.range(*data.eh_frame_hdr_svma);
  w.bytes(data.eh_frame.data(), data.eh_frame.size());
  w.range(data.eh_frame_svma);
  return w.take();
}

base::Result<UnwindData> decode_unwind_data(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  uint32_t tag = 0;
  if (!r.u32(&tag)) return base::Error("unwind data: truncated version tag");
  if (tag == kTagV1 || tag == kTagV2) {
    return base::Error("unwind data: version V" + std::to_string(tag + 1) +
                       " is not supported (breaking changes), need V3 or V4");
  }
  if (tag != kTagV3 && tag != kTagV4) {
    return base::Error("unwind data: unknown version tag " +
                       std::to_string(tag));
  }
  UnwindData out;
  bool ok = r.string(&out.path) && r.u64(&out.base_svma);
  if (ok && tag == kTagV3) {
    // V3 always had the header; V4 made it optional.
    std::vector<uint8_t> hdr;
    Range hdr_range;
    ok = r.bytes(&hdr) && r.range(&hdr_range);
    if (ok) {
      out.eh_frame_hdr = std::move(hdr);
      out.eh_frame_hdr_svma = hdr_range;
    }
  } else if (ok) {
    bool some = false;
    ok = r.option_tag(&some);
    if (ok && some) {
      std::vector<uint8_t> hdr;
      ok = r.bytes(&hdr);
      out.eh_frame_hdr = std::move(hdr);
    }
    if (ok) ok = r.option_tag(&some);
    if (ok && some) {
      Range hdr_range;
      ok = r.range(&hdr_range);
      out.eh_frame_hdr_svma = hdr_range;
    }
  }
  ok = ok && r.bytes(&out.eh_frame) && r.range(&out.eh_frame_svma);
  if (!ok) return base::Error("unwind data: truncated or malformed");
  return out;
}

}  // namespace runner::symbols
