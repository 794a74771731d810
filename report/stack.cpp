#include "report/stack.hpp"

// glibc already declares basename(); tell libiberty.h not to redeclare it.
#define HAVE_DECL_BASENAME 1
#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>

#include <libiberty/demangle.h>

namespace runner::report {
namespace {

// perf's x86_64 user-register order (enum perf_event_x86_regs) for the DWARF
// registers the unwinder needs: DWARF 0..16 = rax, rdx, rcx, rbx, rsi, rdi,
// rbp, rsp, r8..r15, rip.
constexpr int kPerfRegOfDwarf[kDwarfRegCount] = {
    0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};

// PERF_CONTEXT_* markers are the top 4095 values of the u64 range.
constexpr uint64_t kPerfContextMax = static_cast<uint64_t>(-4095);

const UnwindRef* find_range(const PidModules* modules, uint64_t addr) {
  if (modules == nullptr) return nullptr;
  const auto& list = modules->unwind;
  auto it = std::upper_bound(
      list.begin(), list.end(), addr,
      [](uint64_t a, const UnwindRef& r) { return a < r.start; });
  // Executable mappings of one process rarely overlap: look at the closest
  // few that start below the address.
  for (int step = 0; step < 8 && it != list.begin(); ++step) {
    --it;
    if (addr >= it->start && addr < it->end) return &*it;
  }
  return nullptr;
}

bool apply_rule(const RegRule& rule, int reg, uint64_t cfa,
                const RegState& regs, const StackMemory& mem,
                std::span<const uint8_t> cfi_bytes, RegState& out,
                bool* memory_outside) {
  uint64_t value = 0;
  switch (rule.kind) {
    case RegRule::Kind::kSameValue:
      if (regs.has(reg)) out.set(reg, regs.value[static_cast<size_t>(reg)]);
      return true;
    case RegRule::Kind::kUndefined:
      return true;
    case RegRule::Kind::kOffset: {
      const uint64_t slot = cfa + static_cast<uint64_t>(rule.offset);
      if (!mem.read_u64(slot, &value)) {
        // A save slot below the stack pointer has been popped: in an
        // epilogue (between `pop %rbp` and `ret`, where GCC's CFI still
        // says "saved at CFA-16") the register already holds the caller's
        // value. perf's libdw unwinder stops there instead.
        if (slot < mem.base && regs.has(reg)) {
          out.set(reg, regs.value[static_cast<size_t>(reg)]);
          return true;
        }
        *memory_outside = true;
        return false;
      }
      out.set(reg, value);
      return true;
    }
    case RegRule::Kind::kValOffset:
      out.set(reg, cfa + static_cast<uint64_t>(rule.offset));
      return true;
    case RegRule::Kind::kRegister:
      if (rule.reg < kDwarfRegCount && regs.has(rule.reg))
        out.set(reg, regs.value[rule.reg]);
      return true;
    case RegRule::Kind::kExpression:
    case RegRule::Kind::kValExpression: {
      if (static_cast<size_t>(rule.expr_offset) + rule.expr_size >
          cfi_bytes.size())
        return false;
      EvalStatus st = evaluate_expression(
          cfi_bytes.subspan(rule.expr_offset, rule.expr_size), regs, mem, cfa,
          &value);
      if (st == EvalStatus::kMemoryOutside) *memory_outside = true;
      if (st != EvalStatus::kOk) return false;
      if (rule.kind == RegRule::Kind::kValExpression) {
        out.set(reg, value);
        return true;
      }
      uint64_t saved = 0;
      if (!mem.read_u64(value, &saved)) {
        *memory_outside = true;
        return false;
      }
      out.set(reg, saved);
      return true;
    }
  }
  return false;
}

}  // namespace

UnwoundStack Unwinder::unwind(const perfdata::SampleRecord& sample,
                              std::span<const uint8_t> stack) {
  if (sample.regs_abi != 0 && !sample.regs.empty() && sample.regs_mask != 0)
    return unwind_dwarf(sample, stack);
  UnwoundStack out;
  for (uint64_t ip : sample.callchain) {
    if (ip >= kPerfContextMax) continue;
    out.addrs.push_back(ip);
    if (out.addrs.size() >= kMaxFrames) break;
  }
  if (out.addrs.empty() && sample.ip != 0) out.addrs.push_back(sample.ip);
  out.end = StackEnd::kComplete;
  return out;
}

const UnwindRow* Unwinder::row_for(UnwindModule* module, uint64_t svma) {
  auto key = std::make_pair(static_cast<const UnwindModule*>(module), svma);
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    auto row = module->eh_frame->find_row(svma);
    it = rows_.emplace(key, row ? std::optional<UnwindRow>(*row) : std::nullopt)
             .first;
  }
  return it->second ? &*it->second : nullptr;
}

UnwindModule* Unwinder::module_for(const UnwindRef* range) {
  if (range == nullptr) return nullptr;
  auto it = modules_.find(range);
  if (it == modules_.end())
    it = modules_.emplace(range, folder_.unwind(range->key)).first;
  return it->second;
}

UnwoundStack Unwinder::unwind_dwarf(const perfdata::SampleRecord& sample,
                                    std::span<const uint8_t> stack) {
  UnwoundStack out;
  // Registers of the sample (one value per set bit of the mask), by DWARF
  // number.
  std::array<uint64_t, 64> by_perf{};
  uint64_t present = 0;
  size_t next = 0;
  for (int bit = 0; bit < 64 && next < sample.regs.size(); ++bit) {
    if ((sample.regs_mask >> bit) & 1u) {
      by_perf[static_cast<size_t>(bit)] = sample.regs[next++];
      present |= 1ull << bit;
    }
  }
  RegState regs;
  for (int r = 0; r < kDwarfRegCount; ++r) {
    int perf_reg = kPerfRegOfDwarf[r];
    if ((present >> perf_reg) & 1u)
      regs.set(r, by_perf[static_cast<size_t>(perf_reg)]);
  }
  if (!regs.has(kDwarfRa) || !regs.has(kDwarfRsp)) {
    if (sample.ip != 0) out.addrs.push_back(sample.ip);
    out.end = StackEnd::kUnknown;
    return out;
  }
  const StackMemory mem{regs.value[kDwarfRsp], stack};
  const PidModules* modules = folder_.modules(static_cast<int32_t>(sample.pid));
  uint64_t ip = regs.value[kDwarfRa];
  out.addrs.push_back(ip);
  const UnwindRef* range = nullptr;
  UnwindModule* module = nullptr;
  const UnwindRow* row = nullptr;
  const UnwindModule* row_module = nullptr;
  uint64_t row_svma = 0;
  // The caller of a signal frame (CIE augmentation 'S') was interrupted at
  // `ip`, not called: its ip is an exact pc, looked up as is like the leaf's
  // (ip - 1 may be another function, or bytes no FDE covers).
  bool exact_pc = true;
  while (out.addrs.size() < kMaxFrames) {
    uint64_t lookup = exact_pc ? ip : ip - 1;
    // Consecutive frames are mostly in the same module (and recursion
    // repeats the same return address): check the last ones first.
    if (range == nullptr || lookup < range->start || lookup >= range->end) {
      range = find_range(modules, lookup);
      module = module_for(range);
    }
    if (module == nullptr) {
      out.end = StackEnd::kUnknown;
      return out;
    }
    uint64_t svma = lookup - range->base_avma + module->base_svma;
    if (row == nullptr || row_module != module || svma != row_svma) {
      row = row_for(module, svma);
      row_module = module;
      row_svma = svma;
    }
    if (row == nullptr) {
      out.end = StackEnd::kUnknown;
      return out;
    }
    std::span<const uint8_t> cfi_bytes = module->eh_frame->bytes();
    uint64_t cfa = 0;
    bool outside = false;
    if (row->cfa.kind == CfaRule::Kind::kRegOffset) {
      if (row->cfa.reg >= kDwarfRegCount || !regs.has(row->cfa.reg)) {
        out.end = StackEnd::kUnknown;
        return out;
      }
      cfa = regs.value[row->cfa.reg] + static_cast<uint64_t>(row->cfa.offset);
    } else if (row->cfa.kind == CfaRule::Kind::kExpression) {
      EvalStatus st = EvalStatus::kUnsupported;
      if (static_cast<size_t>(row->cfa.expr_offset) + row->cfa.expr_size <=
          cfi_bytes.size())
        st = evaluate_expression(
            cfi_bytes.subspan(row->cfa.expr_offset, row->cfa.expr_size), regs,
            mem, std::nullopt, &cfa);
      if (st != EvalStatus::kOk) {
        out.end = st == EvalStatus::kMemoryOutside ? StackEnd::kTruncated
                                                   : StackEnd::kUnknown;
        return out;
      }
    } else {
      out.end = StackEnd::kUnknown;
      return out;
    }
    const RegRule& ra_rule = row->regs[kDwarfRa];
    if (ra_rule.kind == RegRule::Kind::kUndefined) {
      out.end = StackEnd::kComplete;  // the outermost frame (_start, clone)
      return out;
    }
    if (ra_rule.kind == RegRule::Kind::kSameValue) {
      out.end = StackEnd::kUnknown;  // would loop on the same address
      return out;
    }
    RegState caller;
    for (int r = 0; r < kDwarfRegCount; ++r) {
      if (r == kDwarfRsp) continue;
      if (!apply_rule(row->regs[static_cast<size_t>(r)], r, cfa, regs, mem,
                      cfi_bytes, caller, &outside) &&
          r == kDwarfRa) {
        out.end = outside ? StackEnd::kTruncated : StackEnd::kUnknown;
        return out;
      }
    }
    caller.set(kDwarfRsp, cfa);
    if (!caller.has(kDwarfRa) || caller.value[kDwarfRa] == 0) {
      out.end = StackEnd::kComplete;
      return out;
    }
    // The stack grows down: a caller's CFA is above the callee's SP. Anything
    // else is a corrupt frame, not progress.
    if (cfa <= regs.value[kDwarfRsp] && out.addrs.size() > 1) {
      out.end = StackEnd::kUnknown;
      return out;
    }
    regs = caller;
    exact_pc = row->signal_frame;
    ip = regs.value[kDwarfRa];
    if (exact_pc)
      out.interrupted.push_back(static_cast<uint32_t>(out.addrs.size()));
    out.addrs.push_back(ip);
  }
  out.end = StackEnd::kTruncated;  // frame limit
  return out;
}

std::string demangle_symbol(const std::string& raw) {
  if (raw.size() < 2 || raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
    return raw;
  char* out = cplus_demangle(raw.c_str(), DMGL_NO_OPTS);
  if (out == nullptr) return raw;
  std::string result(out);
  std::free(out);
  return result;
}

std::string Symbolizer::display_name(const std::string& raw) {
  if (!demangle_) return raw;
  auto it = demangled_.find(raw);
  if (it != demangled_.end()) return it->second;
  return demangled_[raw] = demangle_symbol(raw);
}

uint32_t Symbolizer::intern(FrameInfo info) {
  auto key = std::make_pair(info.name, info.dso);
  auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(frames_.size());
  frames_.push_back(std::move(info));
  ids_.emplace(std::move(key), id);
  return id;
}

std::span<const uint32_t> Symbolizer::resolve_frames(int32_t pid, uint64_t addr,
                                                     bool leaf) {
  uint64_t lookup = leaf || addr == 0 ? addr : addr - 1;
  auto key = std::make_pair(pid, lookup);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    FrameList list{static_cast<uint32_t>(frame_lists_.size()), 0};
    SymbolLocation location;
    FrameInfo function = this->lookup(pid, lookup, &location);
    if (inline_frames_ && !location.key.empty()) {
      if (const auto* resolver = inline_resolver(location.key)) {
        // Same address as the function's frame, innermost first, as perf.
        for (const symbols::InlineFrame& f : resolver->at(location.svma)) {
          frame_lists_.push_back(intern(FrameInfo{
              display_name(f.name) + " (inlined)", function.dso, true, true}));
        }
      }
    }
    frame_lists_.push_back(intern(std::move(function)));
    list.count = static_cast<uint32_t>(frame_lists_.size()) - list.first;
    it = cache_.emplace(key, list).first;
  }
  return std::span<const uint32_t>(frame_lists_)
      .subspan(it->second.first, it->second.count);
}

const symbols::InlineResolver* Symbolizer::inline_resolver(
    const std::string& key) {
  auto it = inline_resolvers_.find(key);
  if (it != inline_resolvers_.end()) return it->second ? &*it->second : nullptr;
  it = inline_resolvers_.emplace(key, std::nullopt).first;
  const std::string path = folder_.key_path(key);
  // Pseudo files ([vdso], anonymous JIT code) have no ELF file on disk.
  if (path.empty() || path[0] != '/') return nullptr;
  auto skip = [&](const std::string& why) -> const symbols::InlineResolver* {
    folder_.warnings().push_back("--inline: " + path + ": " + why +
                                 "; its frames are not expanded");
    return nullptr;
  };
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return skip("missing");
  // The profile does not record build ids: the file on disk is taken to be
  // the profiled one when every symbol of <key>.symbols.map is in it, at the
  // same address, under the same name.
  const ModuleSymbols* table = folder_.symbols(key);
  if (table == nullptr) return nullptr;
  symbols::DebugSearch search;
  auto on_disk = symbols::read_symbols(path, search);
  if (!on_disk) return skip("unreadable (" + on_disk.error().what() + ")");
  for (const symbols::Symbol& s : table->entries()) {
    auto same = std::equal_range(
        on_disk->begin(), on_disk->end(), s,
        [](const symbols::Symbol& a, const symbols::Symbol& b) {
          return a.addr < b.addr;
        });
    if (std::none_of(same.first, same.second, [&](const symbols::Symbol& d) {
          return d.name == s.name;
        }))
      return skip(
          "a different file than the profiled one (its symbols differ "
          "from " +
          key + ".symbols.map)");
  }
  auto resolver = symbols::InlineResolver::open(path, search);
  if (!resolver) return skip("no DWARF (" + resolver.error().what() + ")");
  it->second.emplace(std::move(*resolver));
  return &*it->second;
}

FrameInfo Symbolizer::lookup(int32_t pid, uint64_t addr,
                             SymbolLocation* location) {
  if (const auto* jit = folder_.perf_map(pid)) {
    auto it = std::upper_bound(
        jit->begin(), jit->end(), addr,
        [](uint64_t a, const JitSymbol& s) { return a < s.start; });
    if (it != jit->begin()) {
      --it;
      if (addr < it->start + it->size)
        return {display_name(it->name), "perf-" + std::to_string(pid) + ".map",
                true};
    }
  }
  const PidModules* modules = folder_.modules(pid);
  if (modules == nullptr) return {"[unknown]", "", false};
  auto symbolize = [&](const std::string& key,
                       uint64_t bias) -> std::optional<FrameInfo> {
    const ModuleSymbols* table = folder_.symbols(key);
    if (table == nullptr) return std::nullopt;
    const symbols::Symbol* sym = table->find(addr - bias);
    if (sym == nullptr) return std::nullopt;
    *location = SymbolLocation{key, addr - bias};
    return FrameInfo{display_name(sym->name), folder_.key_path(key), true};
  };
  // The module whose executable mapping holds the address.
  if (const UnwindRef* range = find_range(modules, addr)) {
    for (const auto& s : modules->symbols) {
      if (s.key != range->key) continue;
      if (auto frame = symbolize(s.key, s.load_bias)) return *frame;
      std::string path = folder_.key_path(s.key);
      char off[32];
      std::snprintf(off, sizeof(off), "+0x%llx",
                    static_cast<unsigned long long>(addr - s.load_bias));
      return {std::filesystem::path(path).filename().string() + off, path,
              false};
    }
  }
  // No range known (a module without unwind data): its symbol bounds.
  for (const auto& s : modules->symbols) {
    const ModuleSymbols* table = folder_.symbols(s.key);
    if (table == nullptr) continue;
    uint64_t elf = addr - s.load_bias;
    if (elf < table->min_addr() || elf >= table->max_end()) continue;
    if (auto frame = symbolize(s.key, s.load_bias)) return *frame;
  }
  return {"[unknown]", "", false};
}

}  // namespace runner::report
