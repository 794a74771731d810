// Public ELF entry points on top of ElfImage: summary, load bias, separate
// debug file lookup, symbol extraction, unwind sections (.eh_frame,
// .eh_frame_hdr).
#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <functional>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "base/base.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

struct AddrName {
  uint64_t addr;
  std::string_view name;
  bool operator==(const AddrName&) const = default;
};

struct AddrNameHash {
  size_t operator()(const AddrName& key) const {
    size_t h = std::hash<std::string_view>{}(key.name);
    return h ^ (std::hash<uint64_t>{}(key.addr) + 0x9e3779b97f4a7c15ULL +
                (h << 6) + (h >> 2));
  }
};

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

bool is_regular_file(const std::string& path, struct stat* st) {
  return ::stat(path.c_str(), st) == 0 && S_ISREG(st->st_mode);
}

}  // namespace

namespace {

std::string dirname_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

uint32_t crc32_update(uint32_t crc, const uint8_t* data, std::size_t size) {
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) {
    crc = kCrcTable[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  }
  return ~crc;
}

base::Result<uint32_t> file_crc32(const std::string& path) {
  RUNNER_ASSIGN_OR_RETURN(base::MappedRegion region,
                          base::MappedRegion::map_file(path), "crc32");
  return crc32_update(0, region.bytes().data(), region.size());
}

base::Result<ElfSummary> read_elf_summary(const std::string& open_path) {
  RUNNER_ASSIGN_OR_RETURN(ElfImage image, ElfImage::open(open_path),
                          "reading ELF summary of " + open_path);
  return image.summary();
}

base::Result<uint64_t> compute_load_bias(std::span<const LoadSegment> loads,
                                         uint64_t start, uint64_t end,
                                         uint64_t offset) {
  uint64_t mapping_size = end - start;
  // Ends computed without overflow: a range whose end does not fit in u64
  // cannot contain (or be contained in) a real file range.
  auto end_of = [](uint64_t base, uint64_t size, uint64_t* out) {
    return !__builtin_add_overflow(base, size, out);
  };
  uint64_t mapping_end = 0;
  bool mapping_end_ok = end_of(offset, mapping_size, &mapping_end);
  for (const LoadSegment& seg : loads) {
    uint64_t seg_end = 0;
    if (!end_of(seg.offset, seg.filesz, &seg_end)) continue;
    // The segment's file range contains the mapping's, or (the kernel maps
    // whole pages, so a mapping can be larger than its segment) the mapping's
    // file range contains the segment's.
    bool contains =
        mapping_end_ok && seg.offset <= offset && mapping_end <= seg_end;
    bool contained =
        mapping_end_ok && offset <= seg.offset && seg_end <= mapping_end;
    if (!contains && !contained) continue;
    uint64_t seg_avma = seg.offset > offset ? start + (seg.offset - offset)
                                            : start - (offset - seg.offset);
    return seg_avma - seg.vaddr;  // unsigned: wraps like wrapping_sub
  }
  return base::Error(
      "Could not find segment or section overlapping the file offset range");
}

std::vector<DebugCandidate> debug_file_candidates(
    const std::string& original_path, const ElfSummary& summary,
    const DebugSearch& search) {
  std::vector<std::string> roots;
  for (const std::string& root : search.roots) {
    struct stat st;
    if (::stat(root.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      roots.push_back(root);
    }
  }
  std::vector<DebugCandidate> out;
  // 1. build-id: <root>/.build-id/ab/cdef....debug
  if (summary.build_id.size() >= 2) {
    std::string id = base::to_hex(summary.build_id);
    for (const std::string& root : roots) {
      out.push_back({root + "/.build-id/" + id.substr(0, 2) + "/" +
                         id.substr(2) + ".debug",
                     false});
    }
  }
  // 2. .gnu_debuglink, only with a matching CRC (a stale debug file would
  // give wrong symbols and lines).
  if (summary.debuglink.empty()) return out;
  std::string dir = dirname_of(original_path);
  out.push_back({dir + "/" + summary.debuglink, true});
  out.push_back({dir + "/.debug/" + summary.debuglink, true});
  std::string rel_dir = dir;
  while (!rel_dir.empty() && rel_dir.front() == '/') rel_dir.erase(0, 1);
  for (const std::string& root : roots) {
    out.push_back({root + "/" + (rel_dir.empty() ? "" : rel_dir + "/") +
                       summary.debuglink,
                   true});
  }
  return out;
}

std::optional<std::string> find_debug_file(const std::string& original_path,
                                           const ElfSummary& summary,
                                           const DebugSearch& search) {
  struct stat original {};
  bool have_original = ::stat(original_path.c_str(), &original) == 0;
  auto is_original = [&](const struct stat& st) {
    return have_original && st.st_dev == original.st_dev &&
           st.st_ino == original.st_ino;
  };
  for (const DebugCandidate& candidate :
       debug_file_candidates(original_path, summary, search)) {
    struct stat st;
    if (!is_regular_file(candidate.path, &st) || is_original(st)) continue;
    if (!candidate.check_crc) return candidate.path;
    base::Result<uint32_t> crc = file_crc32(candidate.path);
    if (crc && *crc == summary.debuglink_crc) return candidate.path;
  }
  return std::nullopt;
}

namespace {

// Adds the symbols of `extra` that `symbols` lacks as (addr, name): a debug
// file repeats most of what the stripped file still has.
void merge_symbols(std::vector<SectionSymbol>& symbols,
                   std::vector<SectionSymbol>& extra) {
  // The set holds views into `symbols`: reserve first so the appends below
  // never reallocate (and move) the strings they point into.
  symbols.reserve(symbols.size() + extra.size());
  std::unordered_set<AddrName, AddrNameHash> present;
  present.reserve(symbols.size());
  for (const SectionSymbol& s : symbols)
    present.insert({s.symbol.addr, s.symbol.name});
  for (SectionSymbol& s : extra) {
    if (present.count({s.symbol.addr, s.symbol.name}) == 0) {
      symbols.push_back(std::move(s));
    }
  }
}

// Symbols of the separate debug file (build-id, then .gnu_debuglink) and of
// the MiniDebugInfo (.gnu_debugdata, its function symbols only). A debug
// file or MiniDebugInfo that cannot be read is ignored: the file's own
// symbols are still right.
void merge_debug_symbols(const ElfImage& image, const std::string& path,
                         const DebugSearch& search,
                         std::vector<SectionSymbol>& symbols) {
  if (std::optional<std::string> debug_path =
          find_debug_file(path, image.summary(), search)) {
    base::Result<ElfImage> debug = ElfImage::open(*debug_path);
    std::vector<SectionSymbol> extra;
    if (debug && debug->append_symbols(extra)) merge_symbols(symbols, extra);
  }
  base::Result<std::optional<ElfImage>> mini = image.mini_debuginfo();
  if (mini && mini->has_value()) {
    std::vector<SectionSymbol> extra;
    if ((*mini)->append_symbols(extra)) {
      std::erase_if(extra, [](const SectionSymbol& s) { return !s.function; });
      merge_symbols(symbols, extra);
    }
  }
}

// By address; aliases at one address in perf's order of preference
// (choose_best_symbol: non-weak, then global, then fewer leading
// underscores, then the longer name), so a reader of .symbols.map can take
// the first name at an address.
void sort_symbols(std::vector<SectionSymbol>& symbols) {
  auto rank = [](const Symbol& s) {
    size_t underscores = 0;
    while (underscores < s.name.size() && s.name[underscores] == '_')
      ++underscores;
    return std::make_tuple(s.binding == STB_WEAK, s.binding != STB_GLOBAL,
                           underscores);
  };
  std::stable_sort(symbols.begin(), symbols.end(),
                   [&rank](const SectionSymbol& x, const SectionSymbol& y) {
                     const Symbol& a = x.symbol;
                     const Symbol& b = y.symbol;
                     if (a.addr != b.addr) return a.addr < b.addr;
                     auto ra = rank(a), rb = rank(b);
                     if (ra != rb) return ra < rb;
                     return a.name.size() > b.name.size();
                   });
}

// The sizes the symbols get (see read_symbols in symbols.hpp): each range
// stays inside the symbol's section; zero sizes reach the next symbol's
// address in executable sections only. `symbols` is sorted by address.
std::vector<Symbol> bound_sizes(std::vector<SectionSymbol>& symbols) {
  std::erase_if(symbols, [](const SectionSymbol& s) {
    return s.symbol.addr < s.section_start || s.symbol.addr >= s.section_end;
  });
  std::vector<Symbol> out;
  out.reserve(symbols.size());
  size_t next = 0;  // first symbol at an address above symbols[i]'s
  for (size_t i = 0; i < symbols.size(); ++i) {
    SectionSymbol& s = symbols[i];
    uint64_t room = s.section_end - s.symbol.addr;
    if (s.symbol.size == 0) {
      if (!s.executable) continue;
      next = std::max(next, i + 1);
      while (next < symbols.size() &&
             symbols[next].symbol.addr <= s.symbol.addr)
        ++next;
      if (next < symbols.size())
        room = std::min(room, symbols[next].symbol.addr - s.symbol.addr);
      s.symbol.size = room;
    } else {
      s.symbol.size = std::min(s.symbol.size, room);
    }
    out.push_back(std::move(s.symbol));
  }
  return out;
}

}  // namespace

base::Result<std::vector<Symbol>> collect_symbols(const ElfImage& image,
                                                  const std::string& path,
                                                  const DebugSearch& search) {
  std::vector<SectionSymbol> symbols;
  RUNNER_RETURN_IF_ERROR(image.append_symbols(symbols), "reading symbols");
  image.append_plt_symbols(symbols);
  merge_debug_symbols(image, path, search, symbols);
  sort_symbols(symbols);
  std::vector<Symbol> out = bound_sizes(symbols);
  if (out.empty()) return base::Error(std::string(kNoSymbolsMessage));
  return out;
}

base::Result<std::vector<Symbol>> read_symbols(const std::string& open_path,
                                               const DebugSearch& search) {
  RUNNER_ASSIGN_OR_RETURN(ElfImage image, ElfImage::open(open_path),
                          "reading symbols of " + open_path);
  return collect_symbols(image, open_path, search);
}

base::Result<UnwindData> read_unwind_data(const std::string& open_path,
                                          const std::string& recorded_path) {
  RUNNER_ASSIGN_OR_RETURN(ElfImage image, ElfImage::open(open_path),
                          "reading unwind data of " + open_path);
  return image.unwind_data(recorded_path);
}

}  // namespace runner::symbols
