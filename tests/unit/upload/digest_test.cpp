// upload/digest: MD5, SHA-256 and base64 against published vectors.
#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"
#include "upload/upload.hpp"

using namespace runner::upload;

TEST_CASE("digests of known inputs") {
  CHECK(md5_base64("") == "1B2M2Y8AsgTpgAmY7PhCfg==");
  CHECK(sha256_hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const uint8_t man[] = {'M', 'a', 'n'};
  CHECK(base64_encode(man) == "TWFu");
  CHECK(base64_encode(std::span<const uint8_t>(man, 2)) == "TWE=");
  CHECK(base64_encode(std::span<const uint8_t>(man, 1)) == "TQ==");
}

TEST_CASE("a file's digests are those of its bytes, read in chunks") {
  runner::testing::TempDir dir;
  std::string data(3u << 20, 'x');
  data[12345] = 'y';
  REQUIRE(runner::base::write_file_atomic(dir.file("f"), data));
  auto fd = runner::base::open_regular_file(dir.file("f"));
  REQUIRE(fd);
  auto digest = digest_fd(fd->get());
  REQUIRE(digest);
  CHECK(digest->size == data.size());
  CHECK(digest->md5_base64 == md5_base64(data));
  CHECK(digest->sha256_hex == sha256_hex(data));
}
