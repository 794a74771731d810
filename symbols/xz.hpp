// Internal to symbols/: xz decompression (liblzma) for MiniDebugInfo, the
// xz-compressed ELF some distributions (Fedora) ship in .gnu_debugdata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/base.hpp"

namespace runner::symbols {

// Largest decompressed .gnu_debugdata accepted (real ones are a few MiB).
inline constexpr std::size_t kMaxMiniDebugInfoSize = std::size_t{256} << 20;

// Decompresses one complete .xz stream. Errors (never a crash) on data that
// is not xz, is truncated or corrupt, needs more than 128 MiB of decoder
// memory, or decompresses to more than `max_size` bytes.
base::Result<std::vector<uint8_t>> decompress_xz(std::span<const uint8_t> in,
                                                 std::size_t max_size);

}  // namespace runner::symbols
