// UnwindData bincode: byte-exact V4 fixture (docs/formats.md), V3 upgrade,
// V1/V2 rejection, truncation at every cut.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

namespace runner::format {
namespace {

// crates/runner-shared/testdata/unwind_data_v4.bin, written out byte by byte.
const std::vector<uint8_t> kV4Fixture = {
    0x03, 0x00, 0x00, 0x00,                          // V4
    0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // path length 12
    '/',  'l',  'i',  'b',  '/',  't',  'e',  's',  't',  '.',
    's',  'o',  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // base_svma 0
    0x00,                                            // eh_frame_hdr None
    0x00,                                            // eh_frame_hdr_svma None
    0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // eh_frame length 4
    0x05, 0x06, 0x07, 0x08, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00,                                      // eh_frame_svma 0x200..
    0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // ..0x300
};

std::vector<uint8_t> le64(uint64_t v) {
  std::vector<uint8_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return out;
}

void append(std::vector<uint8_t>& out, const std::vector<uint8_t>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

// A version 3 unwind data file (88 bytes), laid out as docs/formats.md says.
std::vector<uint8_t> v3_fixture() {
  std::vector<uint8_t> out = {0x02, 0x00, 0x00, 0x00};
  append(out, le64(12));
  append(out, {'/', 'l', 'i', 'b', '/', 't', 'e', 's', 't', '.', 's', 'o'});
  append(out, le64(0));
  append(out, le64(4));
  append(out, {0x01, 0x02, 0x03, 0x04});
  append(out, le64(0x100));
  append(out, le64(0x200));
  append(out, le64(4));
  append(out, {0x05, 0x06, 0x07, 0x08});
  append(out, le64(0x200));
  append(out, le64(0x300));
  return out;
}

// unwind_data_v2.bin layout (121 bytes).
std::vector<uint8_t> v2_fixture() {
  std::vector<uint8_t> out = {0x01, 0x00, 0x00, 0x00};
  append(out, le64(12));
  append(out, {'/', 'l', 'i', 'b', '/', 't', 'e', 's', 't', '.', 's', 'o'});
  out.push_back(0x01);
  append(out, le64(12345));
  append(out, le64(0x1000));
  append(out, le64(0x2000));
  append(out, le64(0x1000));
  append(out, le64(0));
  append(out, le64(4));
  append(out, {0x01, 0x02, 0x03, 0x04});
  append(out, le64(0x100));
  append(out, le64(0x200));
  append(out, le64(4));
  append(out, {0x05, 0x06, 0x07, 0x08});
  append(out, le64(0x200));
  append(out, le64(0x300));
  return out;
}

UnwindData fixture_input() {
  UnwindData data;
  data.path = "/lib/test.so";
  data.base_svma = 0;
  data.eh_frame = {0x05, 0x06, 0x07, 0x08};
  data.eh_frame_svma = Range{0x200, 0x300};
  return data;
}

TEST_SUITE("format") {
  TEST_CASE("unwind data: V4 encoding matches the 62-byte fixture exactly") {
    REQUIRE(kV4Fixture.size() == 62);
    std::vector<uint8_t> encoded = encode_unwind_data(fixture_input());
    CHECK(encoded == kV4Fixture);
  }

  TEST_CASE("unwind data: V4 fixture decodes") {
    auto decoded = decode_unwind_data(kV4Fixture);
    REQUIRE(decoded);
    CHECK(decoded->path == "/lib/test.so");
    CHECK(decoded->base_svma == 0);
    CHECK_FALSE(decoded->eh_frame_hdr.has_value());
    CHECK_FALSE(decoded->eh_frame_hdr_svma.has_value());
    CHECK(decoded->eh_frame == std::vector<uint8_t>{5, 6, 7, 8});
    CHECK(decoded->eh_frame_svma == Range{0x200, 0x300});
  }

  TEST_CASE("unwind data: V4 round trip with a header") {
    UnwindData data = fixture_input();
    data.base_svma = 0x400000;
    data.eh_frame_hdr = std::vector<uint8_t>{1, 2, 3};
    data.eh_frame_hdr_svma = Range{0x100, 0x103};
    auto decoded = decode_unwind_data(encode_unwind_data(data));
    REQUIRE(decoded);
    CHECK(decoded->base_svma == 0x400000);
    REQUIRE(decoded->eh_frame_hdr.has_value());
    CHECK(*decoded->eh_frame_hdr == std::vector<uint8_t>{1, 2, 3});
    CHECK(*decoded->eh_frame_hdr_svma == Range{0x100, 0x103});
    CHECK(encode_unwind_data(*decoded) == encode_unwind_data(data));
  }

  TEST_CASE("unwind data: V3 is upgraded to V4") {
    std::vector<uint8_t> v3 = v3_fixture();
    REQUIRE(v3.size() == 88);
    auto decoded = decode_unwind_data(v3);
    REQUIRE(decoded);
    CHECK(decoded->path == "/lib/test.so");
    REQUIRE(decoded->eh_frame_hdr.has_value());
    CHECK(*decoded->eh_frame_hdr == std::vector<uint8_t>{1, 2, 3, 4});
    REQUIRE(decoded->eh_frame_hdr_svma.has_value());
    CHECK(*decoded->eh_frame_hdr_svma == Range{0x100, 0x200});
    CHECK(decoded->eh_frame == std::vector<uint8_t>{5, 6, 7, 8});
    CHECK(decoded->eh_frame_svma == Range{0x200, 0x300});
    // Re-encoded as V4: tag 3 and both options Some.
    std::vector<uint8_t> v4 = encode_unwind_data(*decoded);
    CHECK(v4[0] == 3);
    CHECK(v4.size() == 88 + 2);
  }

  TEST_CASE("unwind data: V1, V2 and unknown versions are rejected") {
    std::vector<uint8_t> v2 = v2_fixture();
    REQUIRE(v2.size() == 121);
    auto decoded = decode_unwind_data(v2);
    REQUIRE_FALSE(decoded);
    CHECK(decoded.error().message().find("V2") != std::string::npos);
    std::vector<uint8_t> v1 = v2;
    v1[0] = 0;
    CHECK_FALSE(decode_unwind_data(v1));
    std::vector<uint8_t> v9 = kV4Fixture;
    v9[0] = 9;
    CHECK_FALSE(decode_unwind_data(v9));
  }

  TEST_CASE("unwind data: every truncation is rejected") {
    std::vector<uint8_t> with_hdr;
    {
      UnwindData data = fixture_input();
      data.eh_frame_hdr = std::vector<uint8_t>{1, 2, 3, 4};
      data.eh_frame_hdr_svma = Range{0x100, 0x200};
      with_hdr = encode_unwind_data(data);
    }
    for (const std::vector<uint8_t>* full :
         std::vector<const std::vector<uint8_t>*>{&kV4Fixture, &with_hdr}) {
      for (size_t cut = 0; cut < full->size(); ++cut) {
        std::span<const uint8_t> part(full->data(), cut);
        CHECK_MESSAGE(!decode_unwind_data(part), "cut at ", cut);
      }
      CHECK(decode_unwind_data(*full));
    }
    std::vector<uint8_t> v3 = v3_fixture();
    for (size_t cut = 0; cut < v3.size(); ++cut) {
      CHECK_MESSAGE(
          !decode_unwind_data(std::span<const uint8_t>(v3.data(), cut)),
          "v3 cut at ", cut);
    }
  }

  TEST_CASE("unwind data: corrupt lengths and option tags are rejected") {
    std::vector<uint8_t> bad = kV4Fixture;
    bad[11] = 0x7f;  // path length ~ 2^63
    CHECK_FALSE(decode_unwind_data(bad));
    bad = kV4Fixture;
    bad[32] = 2;  // the eh_frame_hdr Option tag (after base_svma) is 0 or 1
    CHECK_FALSE(decode_unwind_data(bad));
  }
}

}  // namespace
}  // namespace runner::format
