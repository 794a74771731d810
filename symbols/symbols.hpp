// symbols: everything the runner needs from ELF/DWARF files on disk, read
// through libelf/libdw (whose types never leave symbols/*.cpp).
//
// Flow: the agent collects executable mappings (from MMAP2 records or
// /proc/<pid>/maps) as ModuleMapping values and calls build_artifacts(). That
// groups mappings by file identity, parses each unique file exactly once on a
// worker pool (ELF summary, symbol list, raw .eh_frame/.eh_frame_hdr, DWARF
// file:line per symbol), writes <key>.symbols.map and <key>.unwind_data into
// the profile folder, and returns an ArtifactSet. The ArtifactSet is plain
// data owned by the caller; the agent turns it into walltime/perf.metadata.
// Addresses in symbols.map, UnwindData and ModuleDebugInfo are raw ELF
// addresses (SVMA); per-pid load biases live in PidModule.
//
// The lower-level functions are usable on their own (tests, `runner report`).
// Every function is safe to call concurrently on different files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::symbols {

// The .symbols.map and .unwind_data formats are format/'s: symbols/ fills
// their types and format/ writes them.
using format::Range;
using format::Symbol;
using format::UnwindData;

// One PT_LOAD program header.
struct LoadSegment {
  uint64_t vaddr = 0, offset = 0, filesz = 0, memsz = 0;
  uint32_t flags = 0;
};

struct ElfSummary {
  std::vector<uint8_t> build_id;   // NT_GNU_BUILD_ID descriptor, empty if none
  std::vector<LoadSegment> loads;  // program header order
  uint64_t base_svma = 0;          // vaddr of the first PT_LOAD
  std::string debuglink;           // .gnu_debuglink file name, empty if none
  uint32_t debuglink_crc = 0;
  bool has_debug_info = false;  // a non-empty .debug_info section in this file
};

base::Result<ElfSummary> read_elf_summary(const std::string& open_path);

// Load bias of one executable mapping [start, end) at file `offset` (see
// docs/formats.md, "Load bias"): the first PT_LOAD whose file range contains
// the mapping's file range or is contained in it; bias = runtime address of
// that segment - p_vaddr, with wrapping arithmetic (biases may "wrap" for odd
// layouts).
base::Result<uint64_t> compute_load_bias(std::span<const LoadSegment> loads,
                                         uint64_t start, uint64_t end,
                                         uint64_t offset);

// `size` bytes of the file's contents at ELF address `svma`, read through
// the PT_LOAD segment whose file bytes hold them (at most 1 MiB; the ELF is
// validated first, as read_elf_summary does).
base::Result<std::vector<uint8_t>> read_code(const std::string& open_path,
                                             uint64_t svma, size_t size);

struct DebugSearch {
  std::vector<std::string> roots = {"/usr/lib/debug"};
};

// Separate debug file of `original_path`: first <root>/.build-id/xx/rest.debug,
// then .gnu_debuglink candidates (<dir>/<link>, <dir>/.debug/<link>,
// <root>/<dir>/<link>) accepted only when their CRC32 matches. Roots that do
// not exist are skipped. Never returns the original file itself.
std::optional<std::string> find_debug_file(const std::string& original_path,
                                           const ElfSummary& summary,
                                           const DebugSearch& search);

// The symbols that name code addresses of `open_path`, so that a frame is
// named only when its address lies inside a symbol's [addr, addr + size):
// - from .symtab and .dynsym, then the separate debug file's (find_debug_file)
//   and the MiniDebugInfo's (an xz-compressed ELF in .gnu_debugdata, at most
//   256 MiB decompressed; its STT_FUNC / STT_GNU_IFUNC symbols only); a
//   symbol already present as (addr, name) is not repeated, and an unreadable
//   debug file or MiniDebugInfo is ignored;
// - only symbols defined in an allocated section of the file they come from:
//   imports (SHN_UNDEF), SHN_ABS and SHN_COMMON symbols, STT_FILE,
//   STT_SECTION and STT_TLS entries, empty names and ARM mapping symbols are
//   dropped, and so is a symbol whose address is outside its section;
// - x86-64 PLT entries (.plt, .plt.sec, .plt.got) named "<name>@plt" after
//   the .dynsym symbol whose JUMP_SLOT / GLOB_DAT relocation fills the GOT
//   slot the entry jumps through, sized one entry (the .plt header is
//   unnamed);
// - sorted by address, aliases in perf's order of preference;
// - sizes never reach past the end of the symbol's section; a zero-size
//   symbol in an executable (SHF_EXECINSTR) section reaches the next symbol's
//   address or its section's end, whichever comes first, and a zero-size
//   symbol anywhere else is dropped.
// No symbol left -> Error "No symbols found".
base::Result<std::vector<Symbol>> read_symbols(const std::string& open_path,
                                               const DebugSearch& search);

// base_svma = first PT_LOAD vaddr; raw .eh_frame (required, else Error
// "Failed to find eh_frame section") and optional .eh_frame_hdr with their
// [addr, addr+size) ranges.
base::Result<UnwindData> read_unwind_data(const std::string& open_path,
                                          const std::string& recorded_path);

struct DebugInfoEntry {
  uint64_t addr = 0, size = 0;
  std::string name, file;
  std::optional<uint32_t> line;
};

struct ModuleDebugInfo {
  std::string object_path;
  uint64_t addr_min = 0, addr_max = 0;  // over entries: min addr, max addr+size
  std::vector<DebugInfoEntry> entries;  // sorted by addr
};

// Debug info (docs/formats.md, "Debug info"): for each symbol, file:line of the
// outermost non-inlined frame at its address (the call site of the outermost
// inlined call, or the line table row when nothing is inlined there), from this
// file's DWARF or from its separate debug file. Symbols without a location are
// skipped; no entry at all -> Error.
base::Result<ModuleDebugInfo> read_debug_info(const std::string& open_path,
                                              const std::string& recorded_path,
                                              std::span<const Symbol> symbols,
                                              const DebugSearch& search);

// ---- inline frames (runner report --inline)
// ----------------------------------------------

// One inlined function containing an address.
struct InlineFrame {
  // DW_AT_linkage_name, else DW_AT_name, of the inlined function (followed
  // through DW_AT_abstract_origin / DW_AT_specification); "??" when the
  // DWARF names none.
  std::string name;
};

// The inline call trees of one ELF file, from its own DWARF or from its
// separate debug file. Each compile unit is indexed lazily, on the first
// query that lands in it. Move-only; not safe to use from two threads.
class InlineResolver {
 public:
  // Error when neither the file nor a separate debug file (find_debug_file)
  // has DWARF describing code.
  static base::Result<InlineResolver> open(const std::string& elf_path,
                                           const DebugSearch& search);

  InlineResolver(InlineResolver&& other) noexcept;
  InlineResolver& operator=(InlineResolver&& other) noexcept;
  ~InlineResolver();

  // The inlined functions whose code contains `svma` (a raw ELF address),
  // innermost first. The containing real function is not part of it (the
  // symbol table names it); empty when the address is not in inlined code
  // or not described by the DWARF.
  std::vector<InlineFrame> at(uint64_t svma) const;

  // The file whose DWARF is read (the ELF itself or its debug file).
  const std::string& dwarf_path() const;

 private:
  struct Impl;
  explicit InlineResolver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- artifact builder
// --------------------------------------------------------

struct ModuleMapping {
  int32_t pid = 0;
  std::string path;       // as recorded (MMAP2 filename / maps pathname)
  std::string open_path;  // where to open it now (e.g. /proc/<pid>/root/...);
                          // empty = path
  uint64_t start = 0, end = 0, pgoff = 0;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;  // 0 = identity unknown
  std::optional<uint64_t> timestamp;
};

// The mapping one /proc/<pid>/maps line describes (as the pid saw it).
inline ModuleMapping module_mapping(const format::ProcMapping& line,
                                    int32_t pid) {
  return ModuleMapping{.pid = pid,
                       .path = line.path,
                       .open_path = {},
                       .start = line.start,
                       .end = line.end,
                       .pgoff = line.offset,
                       .dev_major = line.dev_major,
                       .dev_minor = line.dev_minor,
                       .inode = line.inode,
                       .timestamp = std::nullopt};
}

// Default size cap of the finalize cache.
inline constexpr uint64_t kDefaultCacheMaxBytes = uint64_t{512} << 20;

struct ArtifactOptions {
  std::string out_dir;
  unsigned threads = 0;  // 0 = all cores
  bool debug_info = true;
  DebugSearch debug;
  // The finalize cache (symbols/module_cache.hpp): a private folder where
  // the outputs of each file with a GNU build-id are kept between runs;
  // empty or a cap of 0: no cache.
  std::string cache_dir;
  uint64_t cache_max_bytes = kDefaultCacheMaxBytes;
};

// What one pid sees of one mapping of a module (a file mapped several times
// gives several, each with its own load bias).
struct PidModule {
  std::string key;
  std::string path;
  uint64_t load_bias = 0;
  bool has_symbols = false, has_unwind = false, has_debug_info = false;
  Range avma_range;        // mapping start..end (ProcessUnwindData)
  uint64_t base_avma = 0;  // base_svma + load_bias (wrapping)
  std::optional<uint64_t> timestamp;
};

struct ModuleInfo {
  std::string key, path;
  std::vector<uint8_t> build_id;  // GNU build-id of the file, empty if none
  bool has_symbols = false, has_unwind = false, has_debug_info = false;
  uint64_t symbols_min = 0, symbols_max_end = 0;  // for ignored_modules_by_pid
  std::size_t symbol_count = 0;
};

struct ArtifactSet {
  std::vector<ModuleInfo> modules;                    // sorted by key index
  std::map<std::string, ModuleDebugInfo> debug_info;  // by key
  std::map<int32_t, std::vector<PidModule>> by_pid;  // each sorted by key index
  // reason -> count: "not_elf", "unreadable", "truncated", "bad_elf",
  // "no_symbols", "no_eh_frame", "no_debug_info", "no_load_segment",
  // "write_failed".
  std::map<std::string, uint64_t> errors;
  std::map<std::string, std::string>
      error_examples;  // reason -> "path: message"
  // Every "write_failed", "module path: message", in key order: artifacts
  // lost to a full disk or an I/O error (the caller must report them).
  std::vector<std::string> write_failures;
  // Files whose artifacts came from the finalize cache.
  std::size_t cache_hits = 0;
};

// Groups mappings by file identity (path + dev/inode when known; one path
// seen with two identities gets two keys; mappings with unknown identity join
// the path's only/first known identity), sorts unique files by (path,
// identity) and names them "<index>__<basename>" so the same set of files
// always gets the same keys. Each unique file is parsed once, in parallel;
// <key>.symbols.map and <key>.unwind_data are written atomically. Per-pid
// load bias per mapping (every mapping of a file by a pid). With a cache_dir,
// a file whose outputs are in the cache is not parsed (only its ELF headers
// are read, for its build-id and load segments). Per-file
// failures never stop the run: they are counted in `errors`. Only failing to
// create out_dir is an Error.
base::Result<ArtifactSet> build_artifacts(
    std::span<const ModuleMapping> mappings, const ArtifactOptions& options);

// Key naming helper (exposed for tests): "<index>__<basename>".
std::string make_module_key(std::size_t index, std::string_view path);

}  // namespace runner::symbols
