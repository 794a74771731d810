// Internal to symbols/: one opened ELF file. The libelf handle sits behind a
// pimpl so that no libelf type appears in a header; elf_image.cpp is the only
// place that calls libelf.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
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

// A defined symbol and the address range of the section defining it.
struct SectionSymbol {
  Symbol symbol;
  uint64_t section_start = 0, section_end = 0;  // [start, end)
  bool executable = false;                      // the section has SHF_EXECINSTR
  bool function = false;                        // STT_FUNC or STT_GNU_IFUNC
};

class ElfImage {
 public:
  // Opens and validates `path`: ELF magic, headers and every section/segment
  // file range inside the file, so later reads cannot run past its end.
  static base::Result<ElfImage> open(const std::string& path);
  // The same on an ELF image held in memory (MiniDebugInfo); device() and
  // inode() are 0.
  static base::Result<ElfImage> open_memory(std::vector<uint8_t> bytes);

  ElfImage(ElfImage&& other) noexcept;
  ElfImage& operator=(ElfImage&& other) noexcept;
  ~ElfImage();

  const ElfSummary& summary() const;
  dev_t device() const;
  ino_t inode() const;

  // Appends the defined symbols of .symtab then .dynsym: those with a name
  // (ARM mapping symbols excepted) defined in an allocated section of this
  // file. Imports (SHN_UNDEF), absolute and common symbols, and STT_FILE,
  // STT_SECTION and STT_TLS entries are left out.
  base::Status append_symbols(std::vector<SectionSymbol>& out) const;
  // x86-64 only: one "<name>@plt" symbol per entry of .plt, .plt.sec and
  // .plt.got whose indirect jump reads a GOT slot that an
  // R_X86_64_JUMP_SLOT or R_X86_64_GLOB_DAT relocation against .dynsym
  // symbol <name> fills (decode_x86_64_plt). Nothing on other machines or
  // when the sections are missing or malformed.
  void append_plt_symbols(std::vector<SectionSymbol>& out) const;
  // The ELF inside .gnu_debugdata (MiniDebugInfo, xz-compressed, at most
  // kMaxMiniDebugInfoSize decompressed); nullopt when there is no such
  // section, Error when it cannot be decompressed or is no valid ELF.
  base::Result<std::optional<ElfImage>> mini_debuginfo() const;
  base::Result<UnwindData> unwind_data(const std::string& recorded_path) const;

 private:
  struct Impl;
  explicit ElfImage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// read_symbols() on an opened image (see symbols.hpp for the rules).
base::Result<std::vector<Symbol>> collect_symbols(const ElfImage& image,
                                                  const std::string& path,
                                                  const DebugSearch& search);

// Where find_debug_file looks for the separate debug file of
// `original_path`, in its order (roots that are not folders are left out);
// a .gnu_debuglink candidate counts only when its CRC32 matches.
struct DebugCandidate {
  std::string path;
  bool check_crc = false;
};
std::vector<DebugCandidate> debug_file_candidates(
    const std::string& original_path, const ElfSummary& summary,
    const DebugSearch& search);

// GNU debuglink CRC32 (the zlib polynomial) of a whole file.
base::Result<uint32_t> file_crc32(const std::string& path);
uint32_t crc32_update(uint32_t crc, const uint8_t* data, std::size_t size);

}  // namespace runner::symbols
