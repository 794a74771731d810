// file:line per symbol through libdw (docs/formats.md, "Debug info").
//
// Instead of asking libdw for the scope chain of every address (a walk of the
// whole CU per query), each CU is walked once, lazily, to collect its
// "outermost inlined calls": DW_TAG_inlined_subroutine DIEs whose enclosing
// function is a real (non-inlined) subprogram. An address inside one of those
// belongs to inlined code, and the outermost non-inlined frame's location is
// that call's DW_AT_call_file:DW_AT_call_line. Otherwise the line table row
// for the address is the location. CUs are found through our own sorted range
// index built from the CUs' DW_AT_ranges/low_pc, which also works for
// producers that omit .debug_aranges.
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "base/base.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

struct DwarfEnd {
  void operator()(Dwarf* dwarf) const { dwarf_end(dwarf); }
};

struct CuRange {
  uint64_t start = 0, end = 0;
  size_t cu = 0;  // index into DwarfIndex::cus_
};

struct InlineCall {
  uint64_t start = 0, end = 0;
  uint64_t call_file = 0;
  uint32_t call_line = 0;
};

struct SourceLocation {
  std::string file;
  std::optional<uint32_t> line;
};

class DwarfIndex {
 public:
  static base::Result<DwarfIndex> open(const std::string& path) {
    base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return base::errno_error("open " + path);
    Dwarf* dwarf = dwarf_begin(fd.get(), DWARF_C_READ);
    if (dwarf == nullptr) {
      return base::Error(path + ": no usable DWARF: " + dwarf_errmsg(-1));
    }
    DwarfIndex index(std::move(fd), dwarf);
    index.build_cu_ranges();
    return index;
  }

  std::optional<SourceLocation> locate(uint64_t addr) {
    std::optional<size_t> cu_index = find_cu(addr);
    if (!cu_index) return std::nullopt;
    CuData& cu = cus_[*cu_index];
    if (!cu.inlines_built) build_inlines(cu);
    if (const InlineCall* call = find_inline(cu, addr)) {
      const char* file = file_name(cu, call->call_file);
      if (file == nullptr || *file == '\0') return std::nullopt;
      SourceLocation loc{absolute_file(cu, file), std::nullopt};
      if (call->call_line != 0) loc.line = call->call_line;
      return loc;
    }
    Dwarf_Line* line = dwarf_getsrc_die(&cu.die, addr);
    if (line == nullptr) return std::nullopt;
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    if (file == nullptr || *file == '\0') return std::nullopt;
    SourceLocation loc{absolute_file(cu, file), std::nullopt};
    int lineno = 0;
    if (dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
      loc.line = static_cast<uint32_t>(lineno);
    }
    return loc;
  }

 private:
  struct CuData;

  // DWARF 4 line tables name files relative to the unit's DW_AT_comp_dir;
  // join them so the path is the same as addr2line's.
  static std::string absolute_file(CuData& cu, const char* file) {
    if (file[0] == '/') return file;
    Dwarf_Attribute attr;
    const char* dir =
        dwarf_formstring(dwarf_attr(&cu.die, DW_AT_comp_dir, &attr));
    if (dir == nullptr || *dir == '\0') return file;
    std::string out = dir;
    if (out.back() != '/') out += '/';
    return out + file;
  }

  struct CuData {
    Dwarf_Die die;
    bool inlines_built = false;
    std::vector<InlineCall> inlines;  // sorted by start
    Dwarf_Files* files = nullptr;
    size_t file_count = 0;
    bool files_loaded = false;
  };

  DwarfIndex(base::UniqueFd fd, Dwarf* dwarf)
      : fd_(std::move(fd)), dwarf_(dwarf) {}

  void build_cu_ranges() {
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Dwarf_Half version = 0;
    uint8_t unit_type = 0;
    Dwarf_Die cudie, subdie;
    while (dwarf_get_units(dwarf_.get(), cu, &next, &version, &unit_type,
                           &cudie, &subdie) == 0) {
      cu = next;
      if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) continue;
      if (dwarf_tag(&cudie) != DW_TAG_compile_unit &&
          dwarf_tag(&cudie) != DW_TAG_skeleton_unit) {
        continue;
      }
      size_t index = cus_.size();
      cus_.push_back(CuData{cudie, false, {}, nullptr, 0, false});
      Dwarf_Addr base = 0, start = 0, end = 0;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(&cudie, offset, &base, &start, &end)) > 0) {
        if (end > start) ranges_.push_back(CuRange{start, end, index});
      }
    }
    std::sort(
        ranges_.begin(), ranges_.end(),
        [](const CuRange& a, const CuRange& b) { return a.start < b.start; });
  }

  std::optional<size_t> find_cu(uint64_t addr) const {
    // Ranges of different CUs should not overlap, but tolerate a few that
    // do by looking back a little.
    const CuRange* range = base::find_containing(ranges_, addr);
    if (range == nullptr) return std::nullopt;
    return range->cu;
  }

  void collect_inlines(Dwarf_Die* parent, bool inside_inline,
                       std::vector<InlineCall>& out, int depth) {
    // Depth bound: malformed DWARF must not blow the stack.
    if (depth > 256) return;
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_subprogram) {
        collect_inlines(&child, false, out, depth + 1);
      } else if (tag == DW_TAG_inlined_subroutine) {
        if (!inside_inline) {
          Dwarf_Attribute attr;
          Dwarf_Word call_file = 0, call_line = 0;
          if (dwarf_attr(&child, DW_AT_call_file, &attr) != nullptr) {
            dwarf_formudata(&attr, &call_file);
          }
          if (dwarf_attr(&child, DW_AT_call_line, &attr) != nullptr) {
            dwarf_formudata(&attr, &call_line);
          }
          Dwarf_Addr base = 0, start = 0, end = 0;
          ptrdiff_t offset = 0;
          while ((offset = dwarf_ranges(&child, offset, &base, &start, &end)) >
                 0) {
            if (end > start) {
              out.push_back(InlineCall{start, end, call_file,
                                       static_cast<uint32_t>(call_line)});
            }
          }
        }
        collect_inlines(&child, true, out, depth + 1);
      } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
                 tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                 tag == DW_TAG_union_type || tag == DW_TAG_module ||
                 tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
        collect_inlines(&child, inside_inline, out, depth + 1);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }

  void build_inlines(CuData& cu) {
    collect_inlines(&cu.die, false, cu.inlines, 0);
    std::sort(cu.inlines.begin(), cu.inlines.end(),
              [](const InlineCall& a, const InlineCall& b) {
                return a.start < b.start;
              });
    cu.inlines_built = true;
  }

  static const InlineCall* find_inline(const CuData& cu, uint64_t addr) {
    return base::find_containing(cu.inlines, addr);
  }

  const char* file_name(CuData& cu, uint64_t index) {
    if (!cu.files_loaded) {
      cu.files_loaded = true;
      if (dwarf_getsrcfiles(&cu.die, &cu.files, &cu.file_count) != 0) {
        cu.files = nullptr;
        cu.file_count = 0;
      }
    }
    if (cu.files == nullptr || index >= cu.file_count) return nullptr;
    return dwarf_filesrc(cu.files, index, nullptr, nullptr);
  }

  base::UniqueFd fd_;  // libdw reads through it for the Dwarf's lifetime
  std::unique_ptr<Dwarf, DwarfEnd> dwarf_;
  std::vector<CuData> cus_;
  std::vector<CuRange> ranges_;
};

}  // namespace

base::Result<ModuleDebugInfo> read_debug_info(const std::string& open_path,
                                              const std::string& recorded_path,
                                              std::span<const Symbol> symbols,
                                              const DebugSearch& search) {
  RUNNER_ASSIGN_OR_RETURN(ElfSummary summary, read_elf_summary(open_path),
                          "debug info");
  std::string dwarf_path = open_path;
  if (!summary.has_debug_info) {
    std::optional<std::string> found =
        find_debug_file(open_path, summary, search);
    if (!found) {
      return base::Error(open_path +
                         ": no DWARF debug info and no separate debug file");
    }
    dwarf_path = *found;
  }
  RUNNER_ASSIGN_OR_RETURN(DwarfIndex index, DwarfIndex::open(dwarf_path),
                          "debug info");
  ModuleDebugInfo out;
  out.object_path = recorded_path;
  uint64_t min_addr = UINT64_MAX, max_end = 0;
  for (const Symbol& symbol : symbols) {
    // Undefined (imported) symbols sit at address 0 where no code can be
    // (the ELF header is mapped there); a line lookup would only match
    // whatever unit happens to start at 0.
    if (symbol.addr == 0) continue;
    std::optional<SourceLocation> loc = index.locate(symbol.addr);
    if (!loc) continue;
    min_addr = std::min(min_addr, symbol.addr);
    max_end = std::max(max_end, symbol.addr + symbol.size);
    out.entries.push_back(DebugInfoEntry{symbol.addr, symbol.size, symbol.name,
                                         std::move(loc->file), loc->line});
  }
  if (out.entries.empty()) {
    return base::Error(dwarf_path + ": no symbol has a source location");
  }
  std::stable_sort(out.entries.begin(), out.entries.end(),
                   [](const DebugInfoEntry& a, const DebugInfoEntry& b) {
                     return a.addr < b.addr;
                   });
  out.addr_min = min_addr;
  out.addr_max = max_end;
  return out;
}

}  // namespace runner::symbols
