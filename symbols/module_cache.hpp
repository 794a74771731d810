// Internal to symbols/: the finalize cache. build_artifacts() keeps what it
// derives from one ELF file (symbols map, unwind data, debug info, per-file
// errors) in a private folder, so that the next run over the same file
// copies bytes instead of parsing ELF and DWARF again.
//
// Key: the file's GNU build-id, the recorded path, the identity of the file
// opened (st_dev, st_ino, size, mtime and ctime in ns), whether debug info is
// read, the debug search roots and the identity of every separate debug file
// candidate that exists, plus the entry format version. A file without a
// build-id is not cached. The whole key text is stored in the entry and
// compared on lookup; the entry's name only spreads keys over file names.
//
// Entry: "RNRFCACH", u32 version, u32 0, u64 payload size, u64 FNV-1a of the
// payload, then the payload (format::ByteWriter layout, see the .cpp).
//
// Safety (the runner often runs as root): the folder is created 0700 and
// must be a directory owned by us, not a symlink; entries are created
// O_EXCL|O_NOFOLLOW under the folder's fd with a random temporary name and
// renamed into place, so concurrent runs never see half an entry; an entry is
// read only when it is a regular file of ours with one link and at most the
// cap in size, and a corrupt one (bad magic, version, size or checksum) is
// ignored and rebuilt. Least recently used entries (a hit touches its mtime)
// are removed after new ones are written, until the total fits the cap.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/symbols.hpp"

namespace runner::symbols {

inline constexpr uint32_t kModuleCacheVersion = 2;

struct FileError {
  std::string reason;
  std::string example;
  bool operator==(const FileError&) const = default;
};

// What build_artifacts derives from one ELF file before writing anything.
struct ModuleOutputs {
  std::optional<std::string> symbols_map;  // <key>.symbols.map bytes
  uint64_t symbol_count = 0, symbols_min = 0, symbols_max_end = 0;
  std::optional<std::vector<uint8_t>> unwind_data;  // <key>.unwind_data
  std::optional<ModuleDebugInfo> debug_info;
  std::vector<FileError> errors;  // no "write_failed" among them
};

struct CacheKey {
  std::string build_id;  // hex
  std::string text;      // everything the outputs depend on
};

// The key of `image`, opened at `open_path` and recorded as
// `recorded_path`; nullopt when the file cannot be cached (no build-id, or
// the file at open_path is not the one opened).
std::optional<CacheKey> module_cache_key(const ElfImage& image,
                                         const std::string& open_path,
                                         const std::string& recorded_path,
                                         const ArtifactOptions& options);

// An entry's bytes, and back (Error for anything not written by
// encode_cache_entry with this key and version).
std::vector<uint8_t> encode_cache_entry(const std::string& key_text,
                                        const ModuleOutputs& outputs);
base::Result<ModuleOutputs> decode_cache_entry(std::span<const uint8_t> bytes,
                                               const std::string& key_text);

// "<build-id>-<16 hex digits of the key text's hash>.entry"
std::string cache_entry_name(const CacheKey& key);

// One open cache folder. Safe to use from several threads at once.
class ModuleCache {
 public:
  // Creates `dir` (0700, its parents 0755) and checks it: a directory, not a
  // symlink, owned by our effective uid (group/other access is removed).
  static base::Result<ModuleCache> open(const std::string& dir,
                                        uint64_t max_bytes);

  // The entry of `key`, nullopt when there is none or it is not trusted.
  std::optional<ModuleOutputs> lookup(const CacheKey& key) const;
  // Writes the entry of `key` (temporary file + rename).
  base::Status store(const CacheKey& key, const ModuleOutputs& outputs) const;
  // Removes least recently used entries until they total at most the cap,
  // anything in the folder that is not a regular file of ours, and
  // temporary files left over an hour ago by a crashed run.
  void evict() const;

 private:
  ModuleCache(base::UniqueFd dir, uint64_t max_bytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  base::Result<std::vector<uint8_t>> read_entry(const std::string& name) const;

  base::UniqueFd dir_;
  uint64_t max_bytes_ = 0;
};

}  // namespace runner::symbols
