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

std::vector<fifo::Command> collect(fifo::FrameDecoder& decoder,
                                   size_t& oversized) {
  std::vector<fifo::Command> out;
  while (auto frame = decoder.next()) {
    if (std::holds_alternative<fifo::OversizedFrame>(*frame)) {
      ++oversized;
      continue;
    }
    auto decoded = fifo::decode_payload(std::get<Bytes>(*frame));
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
    size_t oversized = 0;
    CHECK(collect(decoder, oversized) == commands);
    CHECK(oversized == 0);
    CHECK_FALSE(decoder.mid_frame());
  }

  TEST_CASE("FrameDecoder: every two-way split point") {
    std::vector<fifo::Command> commands;
    Bytes stream = sample_stream(commands);
    for (size_t split = 0; split <= stream.size(); ++split) {
      CAPTURE(split);
      fifo::FrameDecoder decoder;
      size_t oversized = 0;
      decoder.feed(std::span<const uint8_t>(stream.data(), split));
      auto got = collect(decoder, oversized);
      decoder.feed(std::span<const uint8_t>(stream.data() + split,
                                            stream.size() - split));
      auto rest = collect(decoder, oversized);
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
      size_t oversized = 0;
      std::vector<fifo::Command> got;
      for (size_t at = 0; at < stream.size(); at += chunk) {
        size_t n = std::min(chunk, stream.size() - at);
        decoder.feed(std::span<const uint8_t>(stream.data() + at, n));
        auto part = collect(decoder, oversized);
        got.insert(got.end(), part.begin(), part.end());
      }
      REQUIRE(got == commands);
    }
  }

  TEST_CASE(
      "FrameDecoder: oversized frames are skipped and the stream stays in "
      "sync") {
    Bytes stream;
    Bytes ack = fifo::encode_frame(fifo::Ack{});
    stream.insert(stream.end(), ack.begin(), ack.end());
    uint32_t big = fifo::kMaxFrameSize + 10;
    Bytes header = le32(big);
    stream.insert(stream.end(), header.begin(), header.end());
    // The body contains bytes that look like frames: they must be skipped.
    for (uint32_t i = 0; i < big; ++i)
      stream.push_back(static_cast<uint8_t>(i % 7));
    Bytes stop = fifo::encode_frame(fifo::StopBenchmark{});
    stream.insert(stream.end(), stop.begin(), stop.end());

    for (size_t split :
         {size_t{0}, size_t{3}, size_t{8}, size_t{9}, size_t{100},
          stream.size() - 9, stream.size() - 8, stream.size() - 1}) {
      CAPTURE(split);
      fifo::FrameDecoder decoder;
      size_t oversized = 0;
      decoder.feed(std::span<const uint8_t>(stream.data(), split));
      auto got = collect(decoder, oversized);
      decoder.feed(std::span<const uint8_t>(stream.data() + split,
                                            stream.size() - split));
      auto rest = collect(decoder, oversized);
      got.insert(got.end(), rest.begin(), rest.end());
      REQUIRE(got.size() == 2);
      CHECK(got[0] == fifo::Command(fifo::Ack{}));
      CHECK(got[1] == fifo::Command(fifo::StopBenchmark{}));
      CHECK(oversized == 1);
      CHECK(decoder.oversized_frames() == 1);
    }
  }

  TEST_CASE("FrameDecoder: a 4 GiB length prefix is reported, not allocated") {
    fifo::FrameDecoder decoder;
    Bytes header = le32(0xffffffffu);
    decoder.feed(header);
    auto frame = decoder.next();
    REQUIRE(frame.has_value());
    REQUIRE(std::holds_alternative<fifo::OversizedFrame>(*frame));
    CHECK(std::get<fifo::OversizedFrame>(*frame).declared_size == 0xffffffffu);
    // 64 KiB of following bytes are swallowed as part of the skipped frame.
    Bytes junk(65536, 0);
    decoder.feed(junk);
    CHECK_FALSE(decoder.next().has_value());
    CHECK(decoder.mid_frame());
  }

  TEST_CASE("FrameDecoder: a frame of exactly the limit is delivered") {
    fifo::FrameDecoder decoder;
    Bytes header = le32(fifo::kMaxFrameSize);
    decoder.feed(header);
    Bytes body(fifo::kMaxFrameSize, 0xab);
    decoder.feed(body);
    auto frame = decoder.next();
    REQUIRE(frame.has_value());
    REQUIRE(std::holds_alternative<Bytes>(*frame));
    CHECK(std::get<Bytes>(*frame).size() == fifo::kMaxFrameSize);
  }

  TEST_CASE(
      "FrameDecoder: zero-length and garbage frames come out as payloads") {
    fifo::FrameDecoder decoder;
    Bytes stream = {0, 0, 0, 0, 3, 0, 0, 0, 0x63, 0, 0};
    decoder.feed(stream);
    auto empty = decoder.next();
    REQUIRE(empty.has_value());
    CHECK(std::get<Bytes>(*empty).empty());
    CHECK_FALSE(fifo::decode_payload(std::get<Bytes>(*empty)).has_value());
    auto garbage = decoder.next();
    REQUIRE(garbage.has_value());
    CHECK(std::get<Bytes>(*garbage).size() == 3);
    CHECK_FALSE(fifo::decode_payload(std::get<Bytes>(*garbage)).has_value());
    CHECK_FALSE(decoder.next().has_value());
  }
}
