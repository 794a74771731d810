// A downloaded archive from the shared store: upload::unpack_archive on any
// bytes (tar or tar.zst) must refuse what it cannot take, never crash, and
// never write outside its destination (a fresh folder per input, whose
// parent must hold nothing else afterwards).
#include <dirent.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "upload/upload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string parent = [] {
    std::string dir =
        std::filesystem::temp_directory_path().string() + "/fuzz-unpack-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) std::abort();
    return dir;
  }();
  const std::string destination = parent + "/out";
  std::filesystem::create_directory(destination);
  const int fd = ::memfd_create("archive", MFD_CLOEXEC);
  if (fd < 0 || ::write(fd, data, size) != static_cast<ssize_t>(size) ||
      ::lseek(fd, 0, SEEK_SET) != 0)
    std::abort();
  runner::upload::UnpackLimits limits;
  limits.max_total_bytes = 1u << 20;
  limits.max_entries = 100;
  (void)runner::upload::unpack_archive(fd, destination, limits);
  ::close(fd);
  std::filesystem::remove_all(destination);
  if (!std::filesystem::is_empty(parent)) std::abort();  // something escaped
  return 0;
}
