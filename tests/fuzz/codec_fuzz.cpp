// FIFO codec: decode_payload on any bytes; whatever it accepts must encode
// back to the same bytes (the decoder is strict: no trailing bytes, no
// unknown tags, valid UTF-8), and a frame of it must carry that payload.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "fifo/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto command = runner::fifo::decode_payload(std::span(data, size));
  if (!command) return 0;
  (void)runner::fifo::describe(*command);
  const auto payload = runner::fifo::encode_payload(*command);
  if (payload.size() != size ||
      (size != 0 && std::memcmp(payload.data(), data, size) != 0))
    std::abort();
  const auto frame = runner::fifo::encode_frame(*command);
  if (frame.size() != size + 4) std::abort();
  return 0;
}
