// OpenSSL's libcrypto, wrapped here and nowhere else (see digest.hpp).
#include "upload/digest.hpp"

#include <errno.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

#include "base/base.hpp"

#include <openssl/evp.h>

namespace runner::upload {
namespace {

using MdContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

MdContext new_context(const EVP_MD* md) {
  MdContext ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1)
    throw std::runtime_error("libcrypto: cannot start a digest");
  return ctx;
}

std::vector<uint8_t> finish(EVP_MD_CTX* ctx) {
  std::array<uint8_t, EVP_MAX_MD_SIZE> out{};
  unsigned size = 0;
  EVP_DigestFinal_ex(ctx, out.data(), &size);
  return {out.begin(), out.begin() + size};
}

std::vector<uint8_t> digest_of(const EVP_MD* md, std::string_view data) {
  MdContext ctx = new_context(md);
  EVP_DigestUpdate(ctx.get(), data.data(), data.size());
  return finish(ctx.get());
}

}  // namespace

std::string base64_encode(std::span<const uint8_t> data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                data.data(), static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string sha256_hex(std::string_view data) {
  return base::to_hex(digest_of(EVP_sha256(), data));
}

std::string md5_base64(std::string_view data) {
  return base64_encode(digest_of(EVP_md5(), data));
}

base::Result<FileDigest> digest_fd(int fd) {
  MdContext md5 = new_context(EVP_md5());
  MdContext sha = new_context(EVP_sha256());
  std::vector<char> buffer(1 << 20);
  FileDigest out;
  for (;;) {
    const ssize_t got =
        ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(out.size));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return base::errno_error("cannot read the archive");
    if (got == 0) break;
    EVP_DigestUpdate(md5.get(), buffer.data(), static_cast<size_t>(got));
    EVP_DigestUpdate(sha.get(), buffer.data(), static_cast<size_t>(got));
    out.size += static_cast<uint64_t>(got);
  }
  out.md5_base64 = base64_encode(finish(md5.get()));
  out.sha256_hex = base::to_hex(finish(sha.get()));
  return out;
}

}  // namespace runner::upload
