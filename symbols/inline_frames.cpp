// InlineResolver: the chain of inlined functions at an address, for
// `runner report --inline`.
//
// Asking libdw for the scopes of every address (dwarf_getscopes) walks the
// whole compile unit per query. Instead each CU is walked once, on the first
// query that lands in it, into a tree of its DW_TAG_inlined_subroutine
// ranges: a node per [low, high) piece, holding the pieces of the inline
// calls nested in it. A query descends that tree from the CU's outermost
// inline calls. CUs are found through a sorted index of their
// DW_AT_ranges/low_pc (producers may omit .debug_aranges).
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>

#include <algorithm>
#include <memory>

#include "base/base.hpp"
#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

// Malformed DWARF must not blow the stack.
constexpr int kMaxDepth = 256;
constexpr const char* kUnknownName = "??";

struct DwarfEnd {
  void operator()(Dwarf* dwarf) const { dwarf_end(dwarf); }
};

struct InlineNode {
  uint64_t start = 0, end = 0;
  const char* name = kUnknownName;   // points into libdw's string data
  std::vector<InlineNode> children;  // sorted by start
};

struct CuRange {
  uint64_t start = 0, end = 0;
  size_t cu = 0;
};

struct CuTree {
  Dwarf_Die die;
  bool built = false;
  std::vector<InlineNode> roots;  // outermost inline calls, sorted by start
};

// Linkage name first (what perf's addr2line reports and demangles), through
// abstract origins and specifications.
const char* function_name(Dwarf_Die* die) {
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, name, &attr) == nullptr) continue;
    const char* text = dwarf_formstring(&attr);
    if (text != nullptr && *text != '\0') return text;
  }
  return kUnknownName;
}

void sort_by_start(std::vector<InlineNode>& nodes) {
  std::sort(nodes.begin(), nodes.end(),
            [](const InlineNode& a, const InlineNode& b) {
              return a.start < b.start;
            });
}

// Appends the pieces of the inline calls under `parent` (not nested in
// another inline call below it) to `out`.
void collect(Dwarf_Die* parent, std::vector<InlineNode>& out, int depth) {
  if (depth > kMaxDepth) return;
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_inlined_subroutine: {
        std::vector<InlineNode> inner;
        collect(&child, inner, depth + 1);
        sort_by_start(inner);
        std::vector<InlineNode> pieces;
        Dwarf_Addr base = 0, start = 0, end = 0;
        ptrdiff_t offset = 0;
        while ((offset = dwarf_ranges(&child, offset, &base, &start, &end)) >
               0) {
          if (end > start) pieces.push_back({start, end, nullptr, {}});
        }
        if (pieces.empty()) break;
        const char* name = function_name(&child);
        for (InlineNode& piece : pieces) {
          piece.name = name;
          if (pieces.size() == 1) {
            piece.children = std::move(inner);
          } else {
            for (const InlineNode& node : inner)
              if (node.start >= piece.start && node.start < piece.end)
                piece.children.push_back(node);
          }
          out.push_back(std::move(piece));
        }
        break;
      }
      case DW_TAG_subprogram:
      case DW_TAG_lexical_block:
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type:
      case DW_TAG_module:
      case DW_TAG_try_block:
      case DW_TAG_catch_block:
        collect(&child, out, depth + 1);
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The node of sorted, non-overlapping `nodes` containing `addr`.
const InlineNode* find_node(const std::vector<InlineNode>& nodes,
                            uint64_t addr) {
  // Well-formed siblings do not overlap; tolerate a few that do.
  return base::find_containing(nodes, addr);
}

}  // namespace

struct InlineResolver::Impl {
  std::string dwarf_path;
  base::UniqueFd fd;  // libdw reads through it for the Dwarf's lifetime
  std::unique_ptr<Dwarf, DwarfEnd> dwarf;
  std::vector<CuTree> cus;
  std::vector<CuRange> ranges;  // sorted by start

  void index_units() {
    Dwarf_CU* cu = nullptr;
    Dwarf_CU* next = nullptr;
    Dwarf_Half version = 0;
    uint8_t unit_type = 0;
    Dwarf_Die cudie{}, subdie{};
    while (dwarf_get_units(dwarf.get(), cu, &next, &version, &unit_type, &cudie,
                           &subdie) == 0) {
      cu = next;
      if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) continue;
      int tag = dwarf_tag(&cudie);
      if (tag != DW_TAG_compile_unit && tag != DW_TAG_skeleton_unit) continue;
      // A skeleton unit's DIEs live in its split unit (when it was found).
      Dwarf_Die tree = cudie;
      if (unit_type == DW_UT_skeleton && subdie.addr != nullptr) tree = subdie;
      size_t index = cus.size();
      cus.push_back(CuTree{tree, false, {}});
      Dwarf_Addr base = 0, start = 0, end = 0;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_ranges(&cudie, offset, &base, &start, &end)) > 0)
        if (end > start) ranges.push_back(CuRange{start, end, index});
    }
    std::sort(
        ranges.begin(), ranges.end(),
        [](const CuRange& a, const CuRange& b) { return a.start < b.start; });
  }

  CuTree* find_cu(uint64_t addr) {
    const CuRange* range = base::find_containing(ranges, addr);
    return range != nullptr ? &cus[range->cu] : nullptr;
  }
};

InlineResolver::InlineResolver(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
InlineResolver::InlineResolver(InlineResolver&& other) noexcept = default;
InlineResolver& InlineResolver::operator=(InlineResolver&& other) noexcept =
    default;
InlineResolver::~InlineResolver() = default;

base::Result<InlineResolver> InlineResolver::open(const std::string& elf_path,
                                                  const DebugSearch& search) {
  RUNNER_ASSIGN_OR_RETURN(ElfSummary summary, read_elf_summary(elf_path),
                          "inline frames");
  auto impl = std::make_unique<Impl>();
  impl->dwarf_path = elf_path;
  if (!summary.has_debug_info) {
    std::optional<std::string> found =
        find_debug_file(elf_path, summary, search);
    if (!found)
      return base::Error(elf_path +
                         ": no DWARF debug info and no separate debug file");
    impl->dwarf_path = *found;
  }
  impl->fd = base::UniqueFd(
      ::open(impl->dwarf_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!impl->fd) return base::errno_error("open " + impl->dwarf_path);
  impl->dwarf.reset(dwarf_begin(impl->fd.get(), DWARF_C_READ));
  if (impl->dwarf == nullptr)
    return base::Error(impl->dwarf_path +
                       ": no usable DWARF: " + dwarf_errmsg(-1));
  impl->index_units();
  if (impl->ranges.empty())
    return base::Error(impl->dwarf_path + ": its DWARF describes no code");
  return InlineResolver(std::move(impl));
}

std::vector<InlineFrame> InlineResolver::at(uint64_t svma) const {
  std::vector<InlineFrame> frames;
  CuTree* cu = impl_->find_cu(svma);
  if (cu == nullptr) return frames;
  if (!cu->built) {
    cu->built = true;
    collect(&cu->die, cu->roots, 0);
    sort_by_start(cu->roots);
  }
  const std::vector<InlineNode>* level = &cu->roots;
  // Outermost first while descending; depth is bounded by the tree's.
  while (const InlineNode* node = find_node(*level, svma)) {
    frames.push_back(InlineFrame{node->name});
    level = &node->children;
  }
  std::reverse(frames.begin(), frames.end());
  return frames;
}

const std::string& InlineResolver::dwarf_path() const {
  return impl_->dwarf_path;
}

}  // namespace runner::symbols
