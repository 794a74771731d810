#include "fifo/codec.hpp"

#include <string>
#include <string_view>
#include <type_traits>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::fifo {
namespace {

// The wire's reads with the protocol's errors: each field is checked for
// room before the byte reader takes it, so the message names the field.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : in_(data) {}

  base::Result<uint32_t> u32(const char* what) {
    if (auto st = need(4, what); !st) return std::move(st).error();
    return in_.u32();
  }
  base::Result<int32_t> i32(const char* what) {
    if (auto st = need(4, what); !st) return std::move(st).error();
    return in_.i32();
  }
  base::Result<uint64_t> u64(const char* what) {
    if (auto st = need(8, what); !st) return std::move(st).error();
    return in_.u64();
  }

  base::Result<std::string> str(const char* what) {
    auto len = u64(what);
    if (!len) return std::move(len).error();
    // Compare before allocating: a hostile length must not allocate.
    if (*len > remaining())
      return base::Error("truncated payload: " + std::string(what) +
                         " declares " + std::to_string(*len) +
                         " bytes but only " + std::to_string(remaining()) +
                         " remain");
    // Strict UTF-8 (the rules of Rust's str::from_utf8).
    const auto text = peek(static_cast<size_t>(*len));
    const size_t bad = base::first_invalid_utf8(std::string_view(
        reinterpret_cast<const char*>(text.data()), text.size()));
    if (bad != std::string_view::npos)
      return base::Error("invalid UTF-8 in " + std::string(what) + " at byte " +
                         std::to_string(bad));
    auto bytes = in_.bytes(*len);
    return std::string(bytes.begin(), bytes.end());
  }

  size_t remaining() const { return in_.remaining(); }

 private:
  base::Status need(size_t bytes, const char* what) const {
    if (remaining() >= bytes) return {};
    return base::Error("truncated payload: need " + std::to_string(bytes) +
                       " bytes for " + what + " at offset " +
                       std::to_string(in_.pos()) + ", " +
                       std::to_string(remaining()) + " left");
  }
  // The next `n` (<= remaining()) bytes, not consumed.
  std::span<const uint8_t> peek(size_t n) const {
    format::ByteReader copy = in_;
    return copy.bytes(n);
  }

  format::ByteReader in_;
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

// bincode's String: u64 length, then the UTF-8 bytes.
void write_str(format::ByteWriter& out, const std::string& s) {
  out.u64(s.size());
  out.bytes(s);
}

}  // namespace

std::vector<uint8_t> encode_payload(const Command& command) {
  format::ByteWriter out;
  out.u32(command_tag(command));
  std::visit(
      [&out](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, CurrentBenchmark>) {
          out.i32(c.pid);
          write_str(out, c.uri);
        } else if constexpr (std::is_same_v<T, SetIntegration>) {
          write_str(out, c.name);
          write_str(out, c.version);
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
  format::ByteWriter frame;
  frame.reserve(4 + payload.size());
  frame.u32(static_cast<uint32_t>(payload.size()));
  frame.bytes(payload);
  return frame.take();
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
