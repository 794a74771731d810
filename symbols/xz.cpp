// xz decompression through liblzma, bounded in output size and memory.
#include "symbols/xz.hpp"

#include <lzma.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace runner::symbols {
namespace {

// Decoder memory limit: covers every preset (xz -9e needs 65 MiB); a header
// asking for more is refused instead of honoured.
constexpr uint64_t kDecoderMemoryLimit = uint64_t{128} << 20;

std::string lzma_message(lzma_ret ret) {
  switch (ret) {
    case LZMA_FORMAT_ERROR:
      return "not xz data";
    case LZMA_OPTIONS_ERROR:
      return "unsupported xz options";
    case LZMA_DATA_ERROR:
      return "corrupt xz data";
    case LZMA_BUF_ERROR:
      return "truncated xz data";
    case LZMA_MEMLIMIT_ERROR:
      return "xz data needs more than 128 MiB of decoder memory";
    case LZMA_MEM_ERROR:
      return "out of memory";
    default:
      return "liblzma error " + std::to_string(static_cast<int>(ret));
  }
}

base::Error too_large(std::size_t max_size) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::string limit = max_size % kMiB == 0
                          ? std::to_string(max_size / kMiB) + " MiB"
                          : std::to_string(max_size) + " bytes";
  return base::Error("xz: decompressed data larger than " + limit);
}

// Owns an lzma_stream so every return path releases the decoder.
struct Decoder {
  lzma_stream strm = LZMA_STREAM_INIT;
  ~Decoder() { lzma_end(&strm); }
};

}  // namespace

base::Result<std::vector<uint8_t>> decompress_xz(std::span<const uint8_t> in,
                                                 std::size_t max_size) {
  Decoder decoder;
  lzma_ret ret = lzma_stream_decoder(&decoder.strm, kDecoderMemoryLimit, 0);
  if (ret != LZMA_OK) return base::Error("xz: " + lzma_message(ret));
  decoder.strm.next_in = in.data();
  decoder.strm.avail_in = in.size();
  std::vector<uint8_t> out;
  // Grows geometrically; one byte past max_size tells "too large" apart from
  // "exactly max_size".
  std::size_t limit = max_size < SIZE_MAX ? max_size + 1 : max_size;
  while (true) {
    if (decoder.strm.avail_out == 0) {
      std::size_t used = out.size();
      if (used >= limit) return too_large(max_size);
      std::size_t grown = std::min(
          limit, std::max<std::size_t>(used * 2, std::size_t{1} << 16));
      out.resize(grown);
      decoder.strm.next_out = out.data() + used;
      decoder.strm.avail_out = grown - used;
    }
    ret = lzma_code(&decoder.strm, LZMA_FINISH);
    if (ret == LZMA_STREAM_END) break;
    if (ret != LZMA_OK) return base::Error("xz: " + lzma_message(ret));
  }
  out.resize(out.size() - decoder.strm.avail_out);
  if (out.size() > max_size) return too_large(max_size);
  return out;
}

}  // namespace runner::symbols
