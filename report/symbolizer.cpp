#include "report/symbolizer.hpp"

// glibc already declares basename(); tell libiberty.h not to redeclare it.
#define HAVE_DECL_BASENAME 1
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "report/unwinder.hpp"

#include <libiberty/demangle.h>

namespace runner::report {

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

std::span<const uint32_t> Symbolizer::jit_frames(int32_t pid,
                                                 const JitNames::Entry& entry) {
  auto it = jit_cache_.find(&entry);
  if (it == jit_cache_.end()) {
    FrameList list{static_cast<uint32_t>(frame_lists_.size()), 1};
    frame_lists_.push_back(
        intern({display_name(entry.name),
                "perf-" + std::to_string(pid) + ".map", true}));
    it = jit_cache_.emplace(&entry, list).first;
  }
  return std::span<const uint32_t>(frame_lists_)
      .subspan(it->second.first, it->second.count);
}

std::span<const uint32_t> Symbolizer::resolve_frames(int32_t pid, uint64_t addr,
                                                     bool leaf, uint64_t time) {
  uint64_t lookup = leaf || addr == 0 ? addr : addr - 1;
  // JIT code first: its name depends on the time (addresses are reused).
  if (const JitNames* jit = folder_.jit_names(pid))
    if (const JitNames::Entry* entry = jit->find(lookup, time))
      return jit_frames(pid, *entry);
  auto key = std::make_pair(pid, lookup);
  // The recent addresses first: a direct-mapped table in front of cache_.
  Recent& recent = recent_[AddressHash()(key) % kRecentSlots];
  if (recent.used && recent.pid == pid && recent.addr == lookup)
    return std::span<const uint32_t>(frame_lists_)
        .subspan(recent.list.first, recent.list.count);
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
  recent = Recent{pid, lookup, it->second, true};
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
    folder_.warn("--inline: " + path + ": " + why +
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

// The load bias of one mapping: its module's only one for the pid, else
// (a file mapped at several biases, as node maps itself) the one that puts
// the module's first segment at this mapping's base_avma.
std::optional<uint64_t> Symbolizer::load_bias_of(const PidModules& modules,
                                                 const UnwindRef& range) {
  const SymbolsRef* only = nullptr;
  size_t count = 0;
  for (const auto& s : modules.symbols)
    if (s.key == range.key && count++ == 0) only = &s;
  if (count == 0) return std::nullopt;
  if (count == 1) return only->load_bias;
  const UnwindModule* module = folder_.unwind(range.key);
  if (module == nullptr) return only->load_bias;
  const uint64_t bias = range.base_avma - module->base_svma;
  for (const auto& s : modules.symbols)
    if (s.key == range.key && s.load_bias == bias) return bias;
  return only->load_bias;
}

FrameInfo Symbolizer::lookup(int32_t pid, uint64_t addr,
                             SymbolLocation* location) {
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
  // The module whose executable mapping holds the address, at that
  // mapping's load bias.
  if (const UnwindRef* range = find_range(modules, addr)) {
    if (std::optional<uint64_t> bias = load_bias_of(*modules, *range)) {
      if (auto frame = symbolize(range->key, *bias)) return *frame;
      std::string path = folder_.key_path(range->key);
      char off[32];
      std::snprintf(off, sizeof(off), "+0x%llx",
                    static_cast<unsigned long long>(addr - *bias));
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
