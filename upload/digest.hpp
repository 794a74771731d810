// Digests through OpenSSL's libcrypto, wrapped here and nowhere else: MD5
// (Content-MD5 of an upload, base64), SHA-256 (run hashes, archive
// checksums, hex), base64.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/base.hpp"

namespace runner::upload {

struct FileDigest {
  uint64_t size = 0;
  std::string md5_base64;  // 24 characters
  std::string sha256_hex;  // 64 lowercase hex digits
};

// Reads `fd` from offset 0 to its end with pread (its offset is not moved),
// in bounded chunks: never the whole file in memory.
base::Result<FileDigest> digest_fd(int fd);

std::string sha256_hex(std::string_view data);
std::string md5_base64(std::string_view data);
std::string base64_encode(std::span<const uint8_t> data);

}  // namespace runner::upload
