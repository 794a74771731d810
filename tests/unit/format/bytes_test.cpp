// The one byte reader/writer: little-endian whatever the host, and a read
// past the end fails the reader (zeros, empty spans) instead of reading
// outside the buffer.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

namespace runner::format {
namespace {

TEST_SUITE("format") {
  TEST_CASE("bytes: writer and reader round-trip every width") {
    ByteWriter w;
    w.u8(0xab);
    w.u16(0x1234);
    w.u32(0xdeadbeef);
    w.u64(0x0102030405060708ULL);
    w.i32(-2);
    w.bytes(std::string_view("hi"));
    w.align(8);
    const std::vector<uint8_t> bytes = w.take();
    CHECK(bytes.size() == 24);
    // Little-endian on the wire: the low byte first.
    CHECK(bytes[1] == 0x34);
    CHECK(bytes[2] == 0x12);
    CHECK(bytes[7] == 0x08);
    CHECK(bytes[14] == 0x01);

    ByteReader r(bytes);
    CHECK(r.u8() == 0xab);
    CHECK(r.u16() == 0x1234);
    CHECK(r.u32() == 0xdeadbeefu);
    CHECK(r.u64() == 0x0102030405060708ULL);
    CHECK(r.i32() == -2);
    auto text = r.bytes(2);
    CHECK(std::string(text.begin(), text.end()) == "hi");
    CHECK(r.remaining() == 3);  // the alignment padding
    CHECK(r.skip(3));
    CHECK(r.ok());
    CHECK(r.remaining() == 0);
  }

  TEST_CASE("bytes: a short input fails the reader for good, with zeros") {
    const std::vector<uint8_t> three = {1, 2, 3};
    ByteReader r(three);
    CHECK(r.u32() == 0);
    CHECK_FALSE(r.ok());
    // Once failed, even what would fit reads as zero.
    CHECK(r.u8() == 0);
    CHECK(r.bytes(1).empty());
    CHECK(r.take(1) == nullptr);
  }

  TEST_CASE("bytes: counts from the input are checked before use") {
    const std::vector<uint8_t> sixteen(16, 0xff);
    ByteReader r(sixteen);
    CHECK(r.fits(2, 8));
    CHECK_FALSE(r.fits(3, 8));
    CHECK_FALSE(r.fits(UINT64_MAX, 8));
    CHECK_FALSE(r.skip_array(UINT64_MAX / 4, 8));
    CHECK_FALSE(r.ok());
    ByteReader huge(sixteen);
    CHECK(huge.bytes(UINT64_MAX).empty());
    CHECK_FALSE(huge.ok());
  }

  TEST_CASE("bytes: load_le peeks without reading out of bounds") {
    const std::vector<uint8_t> b = {0x01, 0x02, 0x03, 0x04, 0x05};
    CHECK(load_le(b, 0, 4) == 0x04030201u);
    CHECK(load_le(b, 1, 4) == 0x05040302u);
    CHECK(load_le(b, 2, 4) == 0);  // one byte short
    CHECK(load_le(b, 9, 1) == 0);
  }
}

}  // namespace
}  // namespace runner::format
