#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "fifo/fifo.hpp"

namespace fifo = runner::fifo;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes hex(const std::string& text) {
  Bytes out;
  int nibble = -1;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else
      continue;
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<uint8_t>(nibble * 16 + v));
      nibble = -1;
    }
  }
  return out;
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes ascii(const std::string& s) { return Bytes(s.begin(), s.end()); }

struct Example {
  fifo::Command command;
  Bytes frame;
};

// Every byte example of docs/protocol.md (frames, length prefix included).
std::vector<Example> spec_examples() {
  return {
      {fifo::CurrentBenchmark{12345, "http://example.com/benchmark"},
       hex("2c 00 00 00 | 00 00 00 00  39 30 00 00  1c 00 00 00 00 00 00 00"
           "68 74 74 70 3a 2f 2f 65 78 61 6d 70 6c 65 2e 63 6f 6d 2f 62 65 6e"
           "63 68 6d 61 72 6b")},
      {fifo::CurrentBenchmark{4242, "bench.cpp::BM_x[8]"},
       hex("22 00 00 00 | 00 00 00 00  92 10 00 00  12 00 00 00 00 00 00 00  "
           "62 65 6e 63 68 2e 63 70 70 3a 3a 42 4d 5f 78 5b 38 5d")},
      {fifo::StartBenchmark{}, hex("04 00 00 00 | 01 00 00 00")},
      {fifo::StopBenchmark{}, hex("04 00 00 00 | 02 00 00 00")},
      {fifo::Ack{}, hex("04 00 00 00 | 03 00 00 00")},
      {fifo::PingPerf{}, hex("04 00 00 00 | 04 00 00 00")},
      {fifo::Err{}, hex("04 00 00 00 | 06 00 00 00")},
      {fifo::SetIntegration{"test-integration", "1.0.0"},
       hex("29 00 00 00 | 05 00 00 00  10 00 00 00 00 00 00 00  74 65 73 74 "
           "2d 69 6e 74 65 67 72 61 74 69 6f 6e 05 00 00 00 00 00 00 00  31 2e "
           "30 2e 30")},
      {fifo::SetIntegration{"codspeed-cpp", "2.3.0"},
       hex("25 00 00 00 | 05 00 00 00  0c 00 00 00 00 00 00 00  63 6f 64 73 "
           "70 65 65 64 2d 63 70 70 05 00 00 00 00 00 00 00  32 2e 33 2e 30")},
      {fifo::AddMarker{4242, {fifo::MarkerType::kRoundStart, 1000000000}},
       hex("14 00 00 00 | 07 00 00 00  92 10 00 00  02 00 00 00  00 ca 9a 3b "
           "00 00 00 00")},
      {fifo::AddMarker{12345, {fifo::MarkerType::kSampleStart, 1000}},
       hex("14 00 00 00 | 07 00 00 00  39 30 00 00  00 00 00 00  e8 03 00 00 "
           "00 00 00 00")},
      {fifo::SetVersion{2},
       hex("0c 00 00 00 | 08 00 00 00  02 00 00 00 00 00 00 00")},
      {fifo::GetIntegrationMode{}, hex("04 00 00 00 | 09 00 00 00")},
      {fifo::IntegrationModeResponse{fifo::IntegrationMode::kWalltime},
       hex("08 00 00 00 | 0a 00 00 00  00 00 00 00")},
      {fifo::IntegrationModeResponse{fifo::IntegrationMode::kSimulation},
       hex("08 00 00 00 | 0a 00 00 00  01 00 00 00")},
      {fifo::IntegrationModeResponse{fifo::IntegrationMode::kAnalysis},
       hex("08 00 00 00 | 0a 00 00 00  02 00 00 00")},
      // The CurrentBenchmark exec-harness sends.
      {fifo::CurrentBenchmark{4242, "exec_harness::sleep 1"},
       hex("25 00 00 00 | 00 00 00 00 92 10 00 00 15 00 00 00 00 00 00 00 "
           "65 78 65 63 5f 68 61 72 6e 65 73 73 3a 3a 73 6c 65 65 70 20 31")},
      {fifo::SetIntegration{"exec-harness", "1.3.0"},
       concat(
           concat(
               concat(hex("25 00 00 00 | 05 00 00 00 0c 00 00 00 00 00 00 00"),
                      ascii("exec-harness")),
               hex("05 00 00 00 00 00 00 00")),
           ascii("1.3.0"))},
      {fifo::AddMarker{4242, {fifo::MarkerType::kRoundStart, 0x1122334455}},
       hex("14 00 00 00 | 07 00 00 00 92 10 00 00 02 00 00 00 55 44 33 22 11 "
           "00 00 00")},
  };
}

// One value of every command kind, with non-trivial fields.
std::vector<fifo::Command> all_commands() {
  return {
      fifo::CurrentBenchmark{-7, "bench.cpp::BM_\xc3\xa9[1]"},
      fifo::StartBenchmark{},
      fifo::StopBenchmark{},
      fifo::Ack{},
      fifo::PingPerf{},
      fifo::SetIntegration{"codspeed-cpp", "2.3.0"},
      fifo::Err{},
      fifo::AddMarker{INT32_MIN, {fifo::MarkerType::kRoundEnd, UINT64_MAX}},
      fifo::SetVersion{UINT64_MAX},
      fifo::GetIntegrationMode{},
      fifo::IntegrationModeResponse{fifo::IntegrationMode::kAnalysis},
  };
}

std::span<const uint8_t> payload_of(const Bytes& frame) {
  return std::span<const uint8_t>(frame).subspan(4);
}

}  // namespace

TEST_SUITE("fifo") {
  TEST_CASE("the protocol's byte examples encode and decode exactly") {
    for (const auto& example : spec_examples()) {
      CAPTURE(fifo::describe(example.command));
      CHECK(fifo::encode_frame(example.command) == example.frame);
      Bytes payload(example.frame.begin() + 4, example.frame.end());
      CHECK(fifo::encode_payload(example.command) == payload);
      auto decoded = fifo::decode_payload(payload);
      REQUIRE_MESSAGE(decoded.has_value(), decoded.error().what());
      CHECK(*decoded == example.command);
    }
  }

  TEST_CASE("every command kind round-trips and has its tag") {
    auto commands = all_commands();
    REQUIRE(commands.size() == std::variant_size_v<fifo::Command>);
    for (size_t i = 0; i < commands.size(); ++i) {
      const auto& command = commands[i];
      CAPTURE(fifo::describe(command));
      CHECK(fifo::command_tag(command) == i);
      Bytes frame = fifo::encode_frame(command);
      CHECK(frame[4] == i);
      auto decoded = fifo::decode_payload(payload_of(frame));
      REQUIRE(decoded.has_value());
      CHECK(*decoded == command);
    }
  }

  TEST_CASE("every truncation point of every command is an error") {
    for (const auto& command : all_commands()) {
      Bytes payload = fifo::encode_payload(command);
      for (size_t cut = 0; cut < payload.size(); ++cut) {
        CAPTURE(fifo::describe(command));
        CAPTURE(cut);
        auto decoded =
            fifo::decode_payload(std::span<const uint8_t>(payload.data(), cut));
        REQUIRE_FALSE(decoded.has_value());
        CHECK(decoded.error().message().find("truncated") != std::string::npos);
      }
    }
  }

  TEST_CASE("trailing bytes are rejected") {
    for (const auto& command : all_commands()) {
      Bytes payload = fifo::encode_payload(command);
      payload.push_back(0);
      auto decoded = fifo::decode_payload(payload);
      REQUIRE_FALSE(decoded.has_value());
      CHECK(decoded.error().message().find("trailing") != std::string::npos);
    }
  }

  TEST_CASE("unknown command, marker and mode tags are rejected") {
    auto tag99 = fifo::decode_payload(hex("63 00 00 00"));
    REQUIRE_FALSE(tag99.has_value());
    CHECK(tag99.error().message() == "unknown command tag 99");
    auto tag11 = fifo::decode_payload(hex("0b 00 00 00"));
    CHECK_FALSE(tag11.has_value());

    auto marker = fifo::decode_payload(
        hex("07 00 00 00  92 10 00 00  04 00 00 00  00 00 00 00 00 00 00 00"));
    REQUIRE_FALSE(marker.has_value());
    CHECK(marker.error().message() == "unknown marker type 4");

    auto mode = fifo::decode_payload(hex("0a 00 00 00  03 00 00 00"));
    REQUIRE_FALSE(mode.has_value());
    CHECK(mode.error().message() == "unknown integration mode 3");
  }

  TEST_CASE("invalid UTF-8 in strings is rejected") {
    const std::vector<std::string> bad = {"\xff",
                                          "\xc3",
                                          "abc\x80",
                                          "\xc0\xaf",
                                          "\xe0\x80\xaf",
                                          "\xed\xa0\x80",
                                          "\xf4\x90\x80\x80",
                                          "\xf8\x88\x80\x80\x80"};
    for (const auto& text : bad) {
      CAPTURE(text.size());
      auto decoded = fifo::decode_payload(
          fifo::encode_payload(fifo::CurrentBenchmark{1, text}));
      REQUIRE_FALSE(decoded.has_value());
      CHECK(decoded.error().message().find("invalid UTF-8 in uri") !=
            std::string::npos);
      auto integration = fifo::decode_payload(
          fifo::encode_payload(fifo::SetIntegration{"ok", text}));
      CHECK_FALSE(integration.has_value());
    }
    // Valid multi-byte sequences up to U+10FFFF pass.
    std::string good = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf";
    auto decoded = fifo::decode_payload(
        fifo::encode_payload(fifo::CurrentBenchmark{1, good}));
    REQUIRE(decoded.has_value());
    CHECK(std::get<fifo::CurrentBenchmark>(*decoded).uri == good);
  }

  TEST_CASE("a huge string length does not allocate or crash") {
    Bytes payload = hex("00 00 00 00  01 00 00 00  ff ff ff ff ff ff ff ff 61");
    auto decoded = fifo::decode_payload(payload);
    REQUIRE_FALSE(decoded.has_value());
    CHECK(decoded.error().message().find("truncated") != std::string::npos);
  }

  TEST_CASE("describe and marker_name") {
    CHECK(std::string(fifo::marker_name(fifo::MarkerType::kSampleStart)) ==
          "SampleStart");
    CHECK(std::string(fifo::marker_name(fifo::MarkerType::kSampleEnd)) ==
          "SampleEnd");
    CHECK(std::string(fifo::marker_name(fifo::MarkerType::kRoundStart)) ==
          "RoundStart");
    CHECK(std::string(fifo::marker_name(fifo::MarkerType::kRoundEnd)) ==
          "RoundEnd");
    CHECK(fifo::describe(fifo::SetVersion{2}) == "SetVersion(2)");
    CHECK(fifo::describe(fifo::CurrentBenchmark{5, "a\nb"}) ==
          "CurrentBenchmark{pid=5, uri=\"a\\x0ab\"}");
    CHECK(
        fifo::describe(fifo::AddMarker{1, {fifo::MarkerType::kRoundEnd, 9}}) ==
        "AddMarker{pid=1, RoundEnd(9)}");
    CHECK(fifo::describe(fifo::CurrentBenchmark{1, std::string(1000, 'x')}) ==
          "CurrentBenchmark{pid=1, uri=\"" + std::string(256, 'x') +
              "\"... (1000 bytes)}");
    CHECK(fifo::describe(fifo::IntegrationModeResponse{}) ==
          "IntegrationModeResponse(Walltime)");
  }
}
