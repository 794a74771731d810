// FIFO frame decoder: the input is the byte stream of the ctl FIFO, fed in
// chunks whose sizes come from the stream itself (every split a reader may
// see), then every frame is decoded as the server does. Checks: no payload
// above kMaxFrameSize, and the decoder never holds more than one frame's
// worth of bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <variant>

#include "fifo/codec.hpp"
#include "fifo/frame_decoder.hpp"

namespace {

void drain(runner::fifo::FrameDecoder& decoder) {
  while (auto frame = decoder.next()) {
    if (frame->size() > runner::fifo::kMaxFrameSize) std::abort();
    (void)runner::fifo::decode_payload(*frame);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte seeds the chunk sizes (1..64 bytes, or all at once).
  const unsigned seed = data[0];
  std::span<const uint8_t> stream(data + 1, size - 1);
  runner::fifo::FrameDecoder decoder;
  size_t pos = 0, step = 0;
  while (pos < stream.size()) {
    size_t chunk =
        seed == 0 ? stream.size() : 1 + (seed * 31u + step * 17u) % 64u;
    if (chunk > stream.size() - pos) chunk = stream.size() - pos;
    decoder.feed(stream.subspan(pos, chunk));
    pos += chunk;
    ++step;
    drain(decoder);
  }
  drain(decoder);
  return 0;
}
