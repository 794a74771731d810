// SCAFFOLD: replaced by the http helper.
#include "upload/digest.hpp"

namespace runner::upload {

base::Result<FileDigest> digest_fd(int) {
  return base::Error("SCAFFOLD: digest_fd");
}
std::string sha256_hex(std::string_view) { return ""; }
std::string md5_base64(std::string_view) { return ""; }
std::string base64_encode(std::span<const uint8_t>) { return ""; }
std::string hex_encode(std::span<const uint8_t>) { return ""; }

}  // namespace runner::upload
