// Internal to symbols/: one opened ELF file. The libelf handle sits behind a
// pimpl so that no libelf type appears in a header; elf_image.cpp is the only
// place that calls libelf.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "symbols/symbols.hpp"

namespace runner::symbols {

// Error messages ElfImage::open produces for the failure classes the artifact
// builder counts separately (errno-carrying errors are "unreadable").
inline constexpr std::string_view kNotElfMessage = "not an ELF file";
inline constexpr std::string_view kTruncatedMessage = "truncated ELF file";
inline constexpr std::string_view kBadElfMessage = "malformed ELF file";
inline constexpr std::string_view kNoSymbolsMessage = "No symbols found";
inline constexpr std::string_view kNoEhFrameMessage =
    "Failed to find eh_frame section";

// "unreadable", "not_elf", "truncated" or "bad_elf".
std::string_view classify_open_error(const base::Error& error);

class ElfImage {
 public:
  // Opens and validates `path`: ELF magic, headers and every section/segment
  // file range inside the file, so later reads cannot run past its end.
  static base::Result<ElfImage> open(const std::string& path);

  ElfImage(ElfImage&& other) noexcept;
  ElfImage& operator=(ElfImage&& other) noexcept;
  ~ElfImage();

  const ElfSummary& summary() const;
  dev_t device() const;
  ino_t inode() const;

  // Appends .symtab then .dynsym entries (unfiltered, except that empty names
  // and ARM mapping symbols are skipped since §5.5 drops them anyway).
  base::Status append_symbols(std::vector<Symbol>& out) const;
  base::Result<UnwindData> unwind_data(const std::string& recorded_path) const;

 private:
  struct Impl;
  explicit ElfImage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// §5.5 steps 3-6 on an opened image (debug-file merge, sort, sizes).
base::Result<std::vector<Symbol>> collect_symbols(const ElfImage& image,
                                                  const std::string& path,
                                                  const DebugSearch& search);

// GNU debuglink CRC32 (the zlib polynomial) of a whole file.
base::Result<uint32_t> file_crc32(const std::string& path);
uint32_t crc32_update(uint32_t crc, const uint8_t* data, std::size_t size);

}  // namespace runner::symbols
