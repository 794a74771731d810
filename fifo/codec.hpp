// Wire codec of the runner FIFO protocol: bincode 1.x legacy encoding of
// `Command` (u32 LE variant tag, fixed-width LE integers, strings as u64 LE
// length + UTF-8 bytes) and the u32 LE length-prefixed framing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/base.hpp"
#include "fifo/command.hpp"

namespace runner::fifo {

// Payload only (what bincode::serialize produces).
std::vector<uint8_t> encode_payload(const Command& command);
// u32 LE payload length, then the payload.
std::vector<uint8_t> encode_frame(const Command& command);
// Strict decoding of one payload: unknown command/marker/mode tags,
// truncation, trailing bytes and invalid UTF-8 are errors (the runner side
// deserializes into Rust `String`s, so the same inputs fail there).
base::Result<Command> decode_payload(std::span<const uint8_t> payload);

}  // namespace runner::fifo
