// Small file helpers shared by the parts that write artifacts.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace runner::base {

// Writes `data` to `path` through `path.tmp.<pid>` + fsync-less rename, so a
// crash never leaves a half-written file at `path`.
Status write_file_atomic(const std::string& path, std::string_view data);
Status write_file_atomic(const std::string& path,
                         std::span<const uint8_t> data);
Result<std::string> read_file(const std::string& path);
// mkdir -p.
Status make_directories(const std::string& path);

}  // namespace runner::base
