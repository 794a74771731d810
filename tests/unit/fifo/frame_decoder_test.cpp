#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "fifo/fifo.hpp"

namespace fifo = runner::fifo;

namespace {

using Bytes = std::vector<uint8_t>;

// A stream of several frames of different kinds and sizes.
Bytes sample_stream(std::vector<fifo::Command>& commands) {
  commands = {
      fifo::SetVersion{2},
      fifo::GetIntegrationMode{},
      fifo::SetIntegration{"codspeed-cpp", "2.3.0"},
      fifo::StartBenchmark{},
      fifo::AddMarker{42, {fifo::MarkerType::kRoundStart, 123456789}},
      fifo::StopBenchmark{},
      fifo::CurrentBenchmark{42, std::string(300, 'u')},
  };
  Bytes stream;
  for (const auto& c : commands) {
    Bytes frame = fifo::encode_frame(c);
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  return stream;
}

std::vector<fifo::Command> collect(fifo::FrameDecoder& decoder) {
  std::vector<fifo::Command> out;
  while (auto frame = decoder.next()) {
    auto decoded = fifo::decode_payload(*frame);
    REQUIRE(decoded.has_value());
    out.push_back(*decoded);
  }
  return out;
}

Bytes le32(uint32_t v) {
  return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
          static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
}

}  // namespace

TEST_SUITE("fifo") {
  TEST_CASE("FrameDecoder: the whole stream at once gives every frame") {
    std::vector<fifo::Command> commands;
    Bytes stream = sample_stream(commands);
    fifo::FrameDecoder decoder;
    decoder.feed(stream);
    CHECK(collect(decoder) == commands);
    CHECK(decoder.oversized_frames() == 0);
    CHECK_FALSE(decoder.mid_frame());
  }

  TEST_CASE("FrameDecoder: every two-way split point") {
    std::vector<fifo::Command> commands;
    Bytes stream = sample_stream(commands);
    for (size_t split = 0; split <= stream.size(); ++split) {
      CAPTURE(split);
      fifo::FrameDecoder decoder;
      decoder.feed(std::span<const uint8_t>(stream.data(), split));
      auto got = collect(decoder);
      decoder.feed(std::span<const uint8_t>(stream.data() + split,
                                            stream.size() - split));
      auto rest = collect(decoder);
      got.insert(got.end(), rest.begin(), rest.end());
      REQUIRE(got == commands);
    }
  }

  TEST_CASE("FrameDecoder: byte by byte, and in chunks of every size") {
    std::vector<fifo::Command> commands;
    Bytes stream = sample_stream(commands);
    for (size_t chunk = 1; chunk <= 40; ++chunk) {
      CAPTURE(chunk);
      fifo::FrameDecoder decoder;
      std::vector<fifo::Command> got;
      for (size_t at = 0; at < stream.size(); at += chunk) {
        size_t n = std::min(chunk, stream.size() - at);
        decoder.feed(std::span<const uint8_t>(stream.data() + at, n));
        auto part = collect(decoder);
        got.insert(got.end(), part.begin(), part.end());
      }
      REQUIRE(got == commands);
    }
  }

  TEST_CASE(
      "FrameDecoder: an impossible length is resynchronised over, not "
      "skipped") {
    // The declared body is not skipped: a length above kMaxFrameSize is not
    // a frame, so the decoder looks for the next plausible header at once.
    Bytes stream;
    Bytes ack = fifo::encode_frame(fifo::Ack{});
    stream.insert(stream.end(), ack.begin(), ack.end());
    Bytes header = le32(fifo::kMaxFrameSize + 10);
    stream.insert(stream.end(), header.begin(), header.end());
    for (uint32_t i = 0; i < 1000; ++i)
      stream.push_back(static_cast<uint8_t>(i % 7));
    Bytes stop = fifo::encode_frame(fifo::StopBenchmark{});
    stream.insert(stream.end(), stop.begin(), stop.end());

    for (size_t split :
         {size_t{0}, size_t{3}, size_t{8}, size_t{9}, size_t{100},
          stream.size() - 9, stream.size() - 8, stream.size() - 1}) {
      CAPTURE(split);
      fifo::FrameDecoder decoder;
      decoder.feed(std::span<const uint8_t>(stream.data(), split));
      auto got = collect(decoder);
      decoder.feed(std::span<const uint8_t>(stream.data() + split,
                                            stream.size() - split));
      auto rest = collect(decoder);
      got.insert(got.end(), rest.begin(), rest.end());
      REQUIRE(got.size() == 2);
      CHECK(got[0] == fifo::Command(fifo::Ack{}));
      CHECK(got[1] == fifo::Command(fifo::StopBenchmark{}));
      CHECK(decoder.oversized_frames() == 1);
      CHECK(decoder.discarded_bytes() == 1004);
    }
  }

  TEST_CASE("FrameDecoder: a 4 GiB length prefix is not allocated") {
    fifo::FrameDecoder decoder;
    Bytes header = le32(0xffffffffu);
    decoder.feed(header);
    CHECK_FALSE(decoder.next().has_value());
    CHECK(decoder.oversized_frames() == 1);
    // 64 KiB of zeros are not a frame either; nothing is held for them.
    Bytes junk(65536, 0);
    decoder.feed(junk);
    CHECK_FALSE(decoder.next().has_value());
    CHECK(decoder.discarded_bytes() >= 65536);
  }

  TEST_CASE("FrameDecoder: a frame of exactly the limit is delivered") {
    fifo::FrameDecoder decoder;
    Bytes bytes = fifo::encode_frame(
        fifo::CurrentBenchmark{1, std::string(fifo::kMaxFrameSize - 16, 'u')});
    REQUIRE(bytes.size() == 4 + fifo::kMaxFrameSize);
    decoder.feed(std::span<const uint8_t>(bytes.data(), 4));
    decoder.feed(std::span<const uint8_t>(bytes.data() + 4, bytes.size() - 4));
    auto frame = decoder.next();
    REQUIRE(frame.has_value());
    CHECK(frame->size() == fifo::kMaxFrameSize);
  }

  TEST_CASE("FrameDecoder: zero-length and garbage frames are skipped") {
    fifo::FrameDecoder decoder;
    Bytes stream = {0, 0, 0, 0, 3, 0, 0, 0, 0x63, 0, 0};
    Bytes start = fifo::encode_frame(fifo::StartBenchmark{});
    stream.insert(stream.end(), start.begin(), start.end());
    decoder.feed(stream);
    CHECK(collect(decoder) ==
          std::vector<fifo::Command>{fifo::StartBenchmark{}});
    CHECK(decoder.discarded_bytes() == 11);
    CHECK(decoder.resyncs() == 1);
  }
}
