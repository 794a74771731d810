// The one byte reader/writer: little-endian whatever the host, and a read
// past the end fails the reader (zeros, empty spans) instead of reading
// outside the buffer.
#include <cstdint>
#include <span>
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

  TEST_CASE("bytes: uleb128 reads 7 bits a byte, low group first") {
    const std::vector<uint8_t> b = {0x00, 0x7f, 0x80, 0x01,
                                    0xe5, 0x8e, 0x26, 0x2a};
    ByteReader r(b);
    CHECK(r.uleb128() == 0);
    CHECK(r.uleb128() == 127);
    CHECK(r.uleb128() == 128);
    CHECK(r.uleb128() == 624485);
    CHECK(r.pos() == 7);
    CHECK(r.u8() == 0x2a);  // fixed-width reads go on after it
    CHECK(r.ok());
  }

  TEST_CASE("bytes: uleb128 at the 64-bit edges keeps the low 64 bits") {
    std::vector<uint8_t> max(9, 0xff);
    max.push_back(0x01);
    ByteReader r_max(max);
    CHECK(r_max.uleb128() == UINT64_MAX);
    CHECK(r_max.pos() == 10);
    std::vector<uint8_t> top(9, 0x80);
    top.push_back(0x01);
    CHECK(ByteReader(top).uleb128() == uint64_t{1} << 63);
    // Too large for 64 bits: the groups' bits past bit 63 are dropped.
    std::vector<uint8_t> wide(9, 0xff);
    wide.push_back(0x7f);
    CHECK(ByteReader(wide).uleb128() == UINT64_MAX);
    std::vector<uint8_t> bit64(9, 0x80);
    bit64.push_back(0x02);
    ByteReader r_bit64(bit64);
    CHECK(r_bit64.uleb128() == 0);
    CHECK(r_bit64.ok());
  }

  TEST_CASE("bytes: overlong uleb128 reads its value and all its bytes") {
    const std::vector<uint8_t> padded = {0x80, 0x80, 0x00, 0x05};
    ByteReader r(padded);
    CHECK(r.uleb128() == 0);
    CHECK(r.pos() == 3);
    CHECK(r.uleb128() == 5);
    // Longer than any 64-bit value needs (16 bytes).
    std::vector<uint8_t> longer = {0x81};
    longer.insert(longer.end(), 14, 0x80);
    longer.push_back(0x00);
    ByteReader r_long(longer);
    CHECK(r_long.uleb128() == 1);
    CHECK(r_long.pos() == 16);
    CHECK(r_long.ok());
  }

  TEST_CASE("bytes: truncated leb128 fails the reader and reads 0") {
    const std::vector<uint8_t> cut = {0x05, 0xff, 0x80};
    ByteReader r(cut);
    CHECK(r.uleb128() == 5);
    CHECK(r.uleb128() == 0);  // no last byte (bit 7 clear) before the end
    CHECK_FALSE(r.ok());
    CHECK(r.u8() == 0);
    ByteReader r_signed(std::span<const uint8_t>(cut).subspan(1));
    CHECK(r_signed.sleb128() == 0);
    CHECK_FALSE(r_signed.ok());
    ByteReader empty(std::span<const uint8_t>{});
    CHECK(empty.uleb128() == 0);
    CHECK_FALSE(empty.ok());
    ByteReader empty_signed(std::span<const uint8_t>{});
    CHECK(empty_signed.sleb128() == 0);
    CHECK_FALSE(empty_signed.ok());
  }

  TEST_CASE("bytes: sleb128 sign-extends from bit 6 of the last byte") {
    const std::vector<uint8_t> b = {0x00, 0x3f, 0x40, 0x7f, 0x80, 0x7f, 0xff,
                                    0x00, 0xc0, 0xbb, 0x78, 0xff, 0xff, 0x7f};
    ByteReader r(b);
    CHECK(r.sleb128() == 0);
    CHECK(r.sleb128() == 63);
    CHECK(r.sleb128() == -64);
    CHECK(r.sleb128() == -1);
    CHECK(r.sleb128() == -128);
    CHECK(r.sleb128() == 127);
    CHECK(r.sleb128() == -123456);
    CHECK(r.sleb128() == -1);  // overlong
    CHECK(r.remaining() == 0);
    CHECK(r.ok());
  }

  TEST_CASE("bytes: sleb128 at the 64-bit edges") {
    std::vector<uint8_t> min(9, 0x80);
    min.push_back(0x7f);
    CHECK(ByteReader(min).sleb128() == INT64_MIN);
    std::vector<uint8_t> max(9, 0xff);
    max.push_back(0x00);
    CHECK(ByteReader(max).sleb128() == INT64_MAX);
    // Nine bytes: the sign still extends from bit 62 into bit 63.
    std::vector<uint8_t> nine(8, 0x80);
    nine.push_back(0x40);
    CHECK(ByteReader(nine).sleb128() == -(int64_t{1} << 62));
    // Past ten bytes nothing more is shifted in, and nothing extended.
    std::vector<uint8_t> longer(12, 0xff);
    longer.push_back(0x7f);
    ByteReader r_long(longer);
    CHECK(r_long.sleb128() == -1);
    CHECK(r_long.pos() == 13);
    std::vector<uint8_t> zero(11, 0x80);
    zero.push_back(0x40);
    CHECK(ByteReader(zero).sleb128() == 0);
  }

  TEST_CASE("bytes: seek moves inside the range, and past it fails") {
    const std::vector<uint8_t> b = {1, 2, 3, 4};
    ByteReader r(b);
    CHECK(r.seek(2));
    CHECK(r.u8() == 3);
    CHECK(r.seek(0));
    CHECK(r.u8() == 1);
    CHECK(r.seek(4));
    CHECK(r.remaining() == 0);
    CHECK_FALSE(r.seek(5));
    CHECK_FALSE(r.ok());
    CHECK(r.pos() == 4);
    CHECK_FALSE(r.seek(0));  // failed for good
    CHECK(r.u8() == 0);
  }
}

}  // namespace
}  // namespace runner::format
