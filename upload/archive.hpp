// Profile folders as tar archives through libarchive, wrapped here and
// nowhere else. Packing streams the folder's files into an anonymous
// temporary file (never the whole folder in memory); unpacking writes under
// a directory the caller created, refusing what could escape it.
#pragma once

#include <cstdint>
#include <string>

#include "base/base.hpp"

namespace runner::upload {

enum class ArchiveCompression { kNone, kZstd };

// A packed folder: the archive is an unlinked temporary file owned by `fd`
// (gone with it), positioned at offset 0.
struct PackedArchive {
  base::UniqueFd fd;
  uint64_t size = 0;          // bytes of the archive
  uint64_t folder_bytes = 0;  // bytes of the regular files packed
  uint64_t entries = 0;       // files and folders packed
};

// Packs every regular file and folder under `folder`, named relative to it
// ("./perf.pipedata", as CodSpeed's runner does), in a stable order (sorted
// by path) with the files' modes and mtimes; symlinks, FIFOs, sockets and
// devices are skipped with a warning (never followed). Errors name the file
// and the cause (a file that cannot be read, a full disk).
base::Result<PackedArchive> pack_folder(const std::string& folder,
                                        ArchiveCompression compression);

// What an upload cost: the folder's bytes, the archive's, and the seconds
// since `start_ns` (base::monotonic_ns) when it is taken.
struct UploadCost {
  uint64_t folder_bytes = 0;
  uint64_t archive_bytes = 0;
  double seconds = 0;
};
UploadCost upload_cost(const PackedArchive& archive, uint64_t start_ns);

struct UnpackLimits {
  uint64_t max_total_bytes = 64ull << 30;  // of the files' contents
  uint64_t max_entries = 1u << 20;         // files and folders
  // When not 0, and archive_fd is a regular file: the files may also total
  // at most max_ratio times the archive's size, or ratio_floor bytes when
  // that is more (a small archive of a small folder compresses well too).
  uint64_t max_ratio = 0;
  uint64_t ratio_floor = 0;
};

struct UnpackStats {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// Unpacks the archive read from `archive_fd` (plain tar or tar.zst, detected)
// into `destination`, an existing folder. Only regular files and folders;
// an absolute name, a ".." component, a link, a device or a FIFO, a name
// that exists already, or going beyond `limits` is an error naming the
// entry (what was written stays, never more than the limits allow; the
// caller removes the folder).
base::Result<UnpackStats> unpack_archive(int archive_fd,
                                         const std::string& destination,
                                         const UnpackLimits& limits = {});

}  // namespace runner::upload
