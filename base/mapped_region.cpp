#include "base/mapped_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <utility>

#include "base/unique_fd.hpp"

namespace runner::base {

MappedRegion::~MappedRegion() { reset(); }

MappedRegion::MappedRegion(MappedRegion&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedRegion& MappedRegion::operator=(MappedRegion&& other) noexcept {
  if (this != &other) {
    reset();
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedRegion::reset() {
  if (addr_ != nullptr && size_ != 0) ::munmap(addr_, size_);
  addr_ = nullptr;
  size_ = 0;
}

Result<MappedRegion> MappedRegion::map(int fd, size_t size, int prot, int flags,
                                       off_t offset) {
  void* addr = ::mmap(nullptr, size, prot, flags, fd, offset);
  if (addr == MAP_FAILED) return errno_error("mmap");
  return MappedRegion(addr, size);
}

Result<MappedRegion> MappedRegion::map_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return errno_error("open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("fstat " + path);
  if (!S_ISREG(st.st_mode)) return Error(path + ": not a regular file");
  if (st.st_size == 0) return MappedRegion();
  auto region =
      map(fd.get(), static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE);
  if (!region) return std::move(region.error()).context(path);
  return region;
}

}  // namespace runner::base
