#include "fifo/codec.hpp"

#include <string>
#include <type_traits>

namespace runner::fifo {
namespace {

class Writer {
 public:
  void u32(uint32_t v) { le(v, 4); }
  void i32(int32_t v) { le(static_cast<uint32_t>(v), 4); }
  void u64(uint64_t v) { le(v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  // Explicit LE byte order so the wire does not depend on the host.
  void le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> out_;
};

// Strict UTF-8 check (the rules of Rust's str::from_utf8): no overlong
// forms, no surrogates, nothing above U+10FFFF. Returns the offset of the
// first bad byte, or size() when valid.
size_t first_invalid_utf8(std::span<const uint8_t> s) {
  size_t i = 0;
  while (i < s.size()) {
    uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else {
      return i;
    }
    if (s.size() - i < len) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xbf) return i;
    i += len;
  }
  return s.size();
}

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : data_(data) {}

  base::Result<uint32_t> u32(const char* what) {
    auto v = le(4, what);
    if (!v) return std::move(v).error();
    return static_cast<uint32_t>(*v);
  }
  base::Result<int32_t> i32(const char* what) {
    auto v = le(4, what);
    if (!v) return std::move(v).error();
    return static_cast<int32_t>(static_cast<uint32_t>(*v));
  }
  base::Result<uint64_t> u64(const char* what) { return le(8, what); }

  base::Result<std::string> str(const char* what) {
    auto len = le(8, what);
    if (!len) return std::move(len).error();
    // Compare before allocating: a hostile length must not allocate.
    if (*len > remaining())
      return base::Error("truncated payload: " + std::string(what) +
                         " declares " + std::to_string(*len) +
                         " bytes but only " + std::to_string(remaining()) +
                         " remain");
    auto bytes = data_.subspan(pos_, static_cast<size_t>(*len));
    size_t bad = first_invalid_utf8(bytes);
    if (bad != bytes.size())
      return base::Error("invalid UTF-8 in " + std::string(what) + " at byte " +
                         std::to_string(bad));
    pos_ += bytes.size();
    return std::string(bytes.begin(), bytes.end());
  }

  size_t remaining() const { return data_.size() - pos_; }

 private:
  base::Result<uint64_t> le(size_t bytes, const char* what) {
    if (remaining() < bytes)
      return base::Error("truncated payload: need " + std::to_string(bytes) +
                         " bytes for " + what + " at offset " +
                         std::to_string(pos_) + ", " +
                         std::to_string(remaining()) + " left");
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i)
      v |= static_cast<uint64_t>(data_[pos_ + i]) << (8 * i);
    pos_ += bytes;
    return v;
  }

  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

// Unwraps a Result<T> into `lhs` or returns its error from decode_body.
#define FIFO_READ(lhs, expr)                                  \
  auto RUNNER_CONCAT(read_, __LINE__) = (expr);               \
  if (!RUNNER_CONCAT(read_, __LINE__))                        \
    return std::move(RUNNER_CONCAT(read_, __LINE__)).error(); \
  lhs = std::move(RUNNER_CONCAT(read_, __LINE__)).value()

base::Result<Command> decode_body(uint32_t tag, Reader& in) {
  switch (tag) {
    case 0: {
      CurrentBenchmark c;
      FIFO_READ(c.pid, in.i32("pid"));
      FIFO_READ(c.uri, in.str("uri"));
      return Command(std::move(c));
    }
    case 1:
      return Command(StartBenchmark{});
    case 2:
      return Command(StopBenchmark{});
    case 3:
      return Command(Ack{});
    case 4:
      return Command(PingPerf{});
    case 5: {
      SetIntegration c;
      FIFO_READ(c.name, in.str("integration name"));
      FIFO_READ(c.version, in.str("integration version"));
      return Command(std::move(c));
    }
    case 6:
      return Command(Err{});
    case 7: {
      AddMarker c;
      FIFO_READ(c.pid, in.i32("pid"));
      FIFO_READ(uint32_t type, in.u32("marker type"));
      if (type > static_cast<uint32_t>(MarkerType::kRoundEnd))
        return base::Error("unknown marker type " + std::to_string(type));
      c.marker.type = static_cast<MarkerType>(type);
      FIFO_READ(c.marker.timestamp, in.u64("marker timestamp"));
      return Command(c);
    }
    case 8: {
      SetVersion c;
      FIFO_READ(c.version, in.u64("protocol version"));
      return Command(c);
    }
    case 9:
      return Command(GetIntegrationMode{});
    case 10: {
      FIFO_READ(uint32_t mode, in.u32("integration mode"));
      if (mode > static_cast<uint32_t>(IntegrationMode::kAnalysis))
        return base::Error("unknown integration mode " + std::to_string(mode));
      return Command(
          IntegrationModeResponse{static_cast<IntegrationMode>(mode)});
    }
    default:
      return base::Error("unknown command tag " + std::to_string(tag));
  }
}

#undef FIFO_READ

}  // namespace

std::vector<uint8_t> encode_payload(const Command& command) {
  Writer out;
  out.u32(command_tag(command));
  std::visit(
      [&out](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, CurrentBenchmark>) {
          out.i32(c.pid);
          out.str(c.uri);
        } else if constexpr (std::is_same_v<T, SetIntegration>) {
          out.str(c.name);
          out.str(c.version);
        } else if constexpr (std::is_same_v<T, AddMarker>) {
          out.i32(c.pid);
          out.u32(static_cast<uint32_t>(c.marker.type));
          out.u64(c.marker.timestamp);
        } else if constexpr (std::is_same_v<T, SetVersion>) {
          out.u64(c.version);
        } else if constexpr (std::is_same_v<T, IntegrationModeResponse>) {
          out.u32(static_cast<uint32_t>(c.mode));
        }
      },
      command);
  return out.take();
}

std::vector<uint8_t> encode_frame(const Command& command) {
  std::vector<uint8_t> payload = encode_payload(command);
  std::vector<uint8_t> frame;
  frame.reserve(4 + payload.size());
  auto len = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i)
    frame.push_back(static_cast<uint8_t>(len >> (8 * i)));
  frame.insert(frame.end(), payload.begin(), payload.end());
  return frame;
}

base::Result<Command> decode_payload(std::span<const uint8_t> payload) {
  Reader in(payload);
  auto tag = in.u32("command tag");
  if (!tag) return std::move(tag).error();
  auto command = decode_body(*tag, in);
  if (!command) return command;
  if (in.remaining() != 0)
    return base::Error(std::to_string(in.remaining()) +
                       " trailing bytes after " + describe(*command));
  return command;
}

}  // namespace runner::fifo
