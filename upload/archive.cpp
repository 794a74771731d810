// SCAFFOLD: replaced by the archive helper.
#include "upload/archive.hpp"

namespace runner::upload {

base::Result<PackedArchive> pack_folder(const std::string&,
                                        ArchiveCompression) {
  return base::Error("SCAFFOLD: pack_folder");
}
base::Result<UnpackStats> unpack_archive(int, const std::string&,
                                         const UnpackLimits&) {
  return base::Error("SCAFFOLD: unpack_archive");
}

}  // namespace runner::upload
