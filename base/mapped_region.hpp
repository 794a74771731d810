// MappedRegion: owns one mmap()ed range and unmaps it on destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/result.hpp"

namespace runner::base {

class MappedRegion {
 public:
  MappedRegion() = default;
  ~MappedRegion();
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  MappedRegion(MappedRegion&& other) noexcept;
  MappedRegion& operator=(MappedRegion&& other) noexcept;

  // mmap(nullptr, size, prot, flags, fd, offset).
  static Result<MappedRegion> map(int fd, size_t size, int prot, int flags,
                                  off_t offset = 0);
  // Read-only private mapping of a whole file (an empty file gives an empty
  // region).
  static Result<MappedRegion> map_file(const std::string& path);

  void* data() const { return addr_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const {
    return {static_cast<const uint8_t*>(addr_), size_};
  }
  bool valid() const { return addr_ != nullptr; }

 private:
  MappedRegion(void* addr, size_t size) : addr_(addr), size_(size) {}
  void reset();

  void* addr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace runner::base
