#include "finalize/jit_artifacts.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "base/base.hpp"
#include "symbols/symbols.hpp"

namespace runner::finalize {
namespace {

constexpr const char* kLog = "agent";

// "vma size name" as perf-<pid>.map has it (hex without 0x); a newline in a
// name would start a bogus line: it becomes a space.
std::string perf_map_line(uint64_t start, uint64_t size,
                          const std::string& name) {
  char head[48];
  std::snprintf(head, sizeof(head), "%" PRIx64 " %" PRIx64 " ", start, size);
  std::string line = head + name;
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line + "\n";
}

// Every place a body ran from: its load address, then each move's.
std::vector<std::pair<uint64_t, uint64_t>> body_ranges(
    const format::JitCode& code) {
  std::vector<std::pair<uint64_t, uint64_t>> out{
      {code.code_addr, code.timestamp}};
  for (const format::JitMove& move : code.moves)
    out.emplace_back(move.new_code_addr, move.timestamp);
  return out;
}

// Turns dumps into artifacts; one per run.
class Builder {
 public:
  Builder(const format::ProfileLayout& layout, size_t first_key_index)
      : layout_(layout), next_index_(first_key_index) {}

  void add_dump(int32_t pid, const std::string& path, uid_t owner);
  JitArtifacts take() { return std::move(out_); }

 private:
  void add_body(int32_t pid, const format::JitCode& code, bool timed);
  // The key of a body's CFI (written once per distinct CFI), or "" when it
  // has none or it could not be written.
  std::string unwind_key(const format::JitCode& code);
  void add_lines(int32_t pid, const std::string& path,
                 const format::JitDump& dump);
  std::string new_key(std::string_view path) {
    std::string key = format::ProfileLayout::module_key(next_index_++, path);
    out_.keys.emplace_back(key, std::string(path));
    return key;
  }

  const format::ProfileLayout& layout_;
  size_t next_index_;
  JitArtifacts out_;
  std::map<std::vector<uint8_t>, std::string> key_by_cfi_;  // CFI -> key
};

void Builder::add_dump(int32_t pid, const std::string& path, uid_t owner) {
  base::ReadOptions options;
  options.max_size = kMaxJitDumpBytes;
  options.owner = owner;
  auto bytes = base::read_file(path, options);
  if (!bytes) {
    ++out_.counts["jitdump_unreadable"];
    RUNNER_LOG(kLog, kWarning)
        << "jitdump of pid " << pid << " not read: " << bytes.error().what();
    return;
  }
  auto dump = format::read_jitdump(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()));
  if (!dump) {
    ++out_.counts["jitdump_malformed"];
    RUNNER_LOG(kLog, kWarning) << path << ": " << dump.error().what()
                               << "; its JIT code stays unnamed";
    return;
  }
  ++out_.counts["jitdump_read"];
  // A runtime writes its dump through a buffer: one killed by a signal (as
  // vitest stops its workers, with SIGTERM) never writes the buffer's last
  // records. What they named is lost to the dump (the runtime's perf map,
  // written line by line, usually still has it): counted and said in the
  // JIT summary, not warned about.
  if (dump->truncated) {
    ++out_.counts["jitdump_truncated"];
    out_.counts["jitdump_bytes_cut"] += bytes->size() - dump->bytes_used;
    RUNNER_LOG(kLog, kDebug)
        << path << " ends inside a record: read up to byte " << dump->bytes_used
        << " of " << bytes->size();
  }
  for (const format::JitCode& code : dump->code)
    add_body(pid, code, !dump->arch_timestamp());
  add_lines(pid, path, *dump);
}

void Builder::add_body(int32_t pid, const format::JitCode& code, bool timed) {
  ++out_.counts["jit_bodies"];
  std::string& lines = out_.perf_map_lines[pid];
  const std::string key = unwind_key(code);
  if (!key.empty()) ++out_.counts["jit_bodies_with_cfi"];
  const auto ranges = body_ranges(code);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& [start, timestamp] = ranges[i];
    lines += perf_map_line(start, code.code_size, code.name);
    // At this address from its record on, until the body's next move.
    if (timed)
      out_.timeline_by_pid[pid].push_back(format::TimedJitEntry{
          start, code.code_size, timestamp,
          i + 1 < ranges.size() ? ranges[i + 1].second : UINT64_MAX,
          code.name});
    if (!key.empty())
      out_.unwind_by_pid[pid].push_back(format::UnwindRef{
          key, timestamp, start, start + code.code_size, start});
  }
}

std::string Builder::unwind_key(const format::JitCode& code) {
  if (!code.unwind || code.unwind->eh_frame.empty() || code.code_size == 0)
    return {};
  format::UnwindData data = format::jit_unwind_data(code);
  data.path.clear();  // bodies with the same CFI share one file
  std::vector<uint8_t> encoded = format::encode_unwind_data(data);
  auto it = key_by_cfi_.find(encoded);
  if (it != key_by_cfi_.end()) return it->second;
  data.path = "jit_" + code.name;
  std::string key = new_key(data.path);
  if (auto st = base::write_file_atomic(layout_.unwind_data(key),
                                        format::encode_unwind_data(data));
      !st) {
    out_.write_failures.push_back(key + ": " + st.error().what());
    key.clear();
  }
  key_by_cfi_.emplace(std::move(encoded), key);
  return key;
}

// One debug_info module per dump: each body that has line entries, at its
// first address, with the file:line of its first entry.
void Builder::add_lines(int32_t pid, const std::string& path,
                        const format::JitDump& dump) {
  format::ModuleDebugInfo info;
  info.object_path = path;
  for (const format::JitCode& code : dump.code) {
    if (code.lines.empty()) continue;
    const format::JitLine& first = code.lines.front();
    for (const auto& [start, timestamp] : body_ranges(code))
      info.entries.push_back(format::DebugInfoEntry{
          start, code.code_size, code.name, dump.file(first), first.line});
  }
  if (info.entries.empty()) return;
  std::sort(info.entries.begin(), info.entries.end(),
            [](const auto& a, const auto& b) { return a.addr < b.addr; });
  info.addr_min = info.entries.front().addr;
  for (const auto& e : info.entries)
    info.addr_max = std::max(info.addr_max, e.addr + e.size);
  const std::string key = new_key(path);
  out_.debug_info.emplace(key, std::move(info));
  out_.debug_info_by_pid[pid].push_back(format::DebugInfoRef{key, 0});
}

bool is_interpreter_file(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.starts_with("libpython") || name.starts_with("python");
}

// The bytes of the interpreter's _Py_trampoline_func_start (up to
// _Py_trampoline_func_end), found in its <key>.symbols.map.
std::optional<std::vector<uint8_t>> trampoline_code(
    const format::ProfileLayout& layout, const std::string& key,
    const std::string& open_path) {
  auto text = base::read_file(layout.symbols_map(key));
  if (!text) return std::nullopt;
  auto symbols = format::parse_symbols_map(*text);
  if (!symbols) return std::nullopt;
  std::optional<uint64_t> start, end;
  for (const format::Symbol& sym : *symbols) {
    if (sym.name == "_Py_trampoline_func_start") start = sym.addr;
    if (sym.name == "_Py_trampoline_func_end") end = sym.addr;
  }
  constexpr uint64_t kMaxTrampoline = 256;
  if (!start || !end || *end <= *start || *end - *start > kMaxTrampoline)
    return std::nullopt;
  auto code = symbols::read_code(open_path, *start, *end - *start);
  if (!code) {
    RUNNER_LOG(kLog, kDebug) << "CPython trampoline: " << code.error().what();
    return std::nullopt;
  }
  return std::move(*code);
}

// What CPython's trampolines of one interpreter file get: the key of their
// CFI and their size; an empty key when the interpreter's trampoline is not
// one the runner knows.
struct Trampoline {
  std::string key;
  uint64_t size = 0;
};

}  // namespace

void add_cpython_trampolines(
    const format::ProfileLayout& layout,
    const std::vector<perfdata::TrackedMapping>& mappings,
    const std::vector<symbols::ModuleInfo>& modules,
    const std::map<int32_t, std::string>& perf_maps, JitArtifacts& out,
    size_t key_index) {
  std::map<std::string, std::string> key_of_path;
  for (const symbols::ModuleInfo& m : modules)
    key_of_path.emplace(m.path, m.key);
  std::map<std::string, Trampoline> by_interpreter;  // by interpreter path
  // The trampoline of the pid's interpreter, its CFI written on first use.
  auto trampoline_of = [&](int32_t pid) -> const Trampoline* {
    for (const perfdata::TrackedMapping& m : mappings) {
      if (m.pid != pid || !is_interpreter_file(m.path)) continue;
      auto known = by_interpreter.find(m.path);
      if (known == by_interpreter.end()) {
        Trampoline t;
        auto key = key_of_path.find(m.path);
        auto code =
            key == key_of_path.end()
                ? std::nullopt
                : trampoline_code(layout, key->second,
                                  m.open_path.empty() ? m.path : m.open_path);
        auto data =
            code ? format::cpython_trampoline_unwind_data(*code) : std::nullopt;
        if (data) {
          t.key = format::ProfileLayout::module_key(key_index++, data->path);
          t.size = code->size();
          if (auto st = base::write_file_atomic(
                  layout.unwind_data(t.key), format::encode_unwind_data(*data));
              !st) {
            out.write_failures.push_back(t.key + ": " + st.error().what());
            t.key.clear();
          } else {
            out.keys.emplace_back(t.key, data->path);
          }
        }
        known = by_interpreter.emplace(m.path, std::move(t)).first;
      }
      if (!known->second.key.empty()) return &known->second;
    }
    return nullptr;
  };
  for (const auto& [pid, text] : perf_maps) {
    if (text.find(" py::") == std::string::npos) continue;
    const Trampoline* t = trampoline_of(pid);
    if (t == nullptr) continue;
    for (const format::PerfMapEntry& e : format::parse_perf_map(text)) {
      if (!e.name.starts_with("py::") || e.size != t->size) continue;
      out.unwind_by_pid[pid].push_back(format::UnwindRef{
          t->key, std::nullopt, e.start, e.start + e.size, e.start});
      ++out.counts["cpython_trampolines"];
    }
  }
}

bool is_jitdump_mapping(const perfdata::TrackedMapping& mapping) {
  const std::string name =
      std::filesystem::path(mapping.path).filename().string();
  return name == "jit-" + std::to_string(mapping.pid) + ".dump";
}

namespace {

uid_t owner_of(const std::map<int32_t, uint32_t>& uids, int32_t pid) {
  auto it = uids.find(pid);
  return it != uids.end() ? it->second : ::geteuid();
}

// Unlinks `path` when it is a regular file (not a link) owned by one of
// `owners`, last modified at or after `since` (CLOCK_REALTIME ns).
bool remove_owned_file(const std::string& path, const std::set<uid_t>& owners,
                       uint64_t since = 0) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      owners.count(st.st_uid) == 0)
    return false;
  const uint64_t mtime =
      static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000u +
      static_cast<uint64_t>(st.st_mtim.tv_nsec);
  if (mtime < since) return false;
  if (::unlink(path.c_str()) != 0) {
    RUNNER_LOG(kLog, kDebug)
        << "not removed: " << path << ": " << std::strerror(errno);
    return false;
  }
  RUNNER_LOG(kLog, kDebug) << "removed " << path;
  return true;
}

// The pid of a V8 log name "isolate-0x<hex>-<pid>-v8.log", or -1.
int32_t v8_log_pid(std::string_view name) {
  constexpr std::string_view kHead = "isolate-0x", kTail = "-v8.log";
  if (!name.starts_with(kHead) || !name.ends_with(kTail)) return -1;
  name = name.substr(kHead.size(), name.size() - kHead.size() - kTail.size());
  const size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos) return -1;
  for (char c : name.substr(0, dash))
    if (!std::isxdigit(static_cast<unsigned char>(c))) return -1;
  const std::string_view digits = name.substr(dash + 1);
  if (digits.empty() || digits.size() > 9) return -1;
  int32_t pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

// "jit-<decimal pid>.dump".
bool is_dump_name(std::string_view name) {
  constexpr std::string_view kHead = "jit-", kTail = ".dump";
  if (!name.starts_with(kHead) || !name.ends_with(kTail)) return false;
  name = name.substr(kHead.size(), name.size() - kHead.size() - kTail.size());
  return !name.empty() && name.size() <= 9 &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

size_t remove_runtime_files(
    const std::vector<perfdata::TrackedMapping>& mappings,
    const std::map<int32_t, uint32_t>& uids,
    const std::vector<std::string>& dirs, uint64_t since) {
  size_t removed = 0;
  std::set<std::string> scan(dirs.begin(), dirs.end());
  std::set<std::string> dumps;
  std::set<uid_t> owners{::geteuid()};
  for (const auto& [pid, uid] : uids) owners.insert(uid);
  for (const perfdata::TrackedMapping& m : mappings) {
    const std::string dir =
        std::filesystem::path(m.path).parent_path().string();
    if (!is_jitdump_mapping(m) || dir == "/tmp" || !dumps.insert(m.path).second)
      continue;
    scan.insert(dir);
    removed += remove_owned_file(m.path, {owner_of(uids, m.pid)});
  }
  if (since == 0) return removed;
  for (const std::string& dir : scan) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> logs;
    while (const dirent* e = ::readdir(d))
      if (v8_log_pid(e->d_name) > 0 ||
          (dir != "/tmp" && is_dump_name(e->d_name)))
        logs.emplace_back(e->d_name);
    ::closedir(d);
    for (const std::string& name : logs)
      removed += remove_owned_file(dir + "/" + name, owners, since);
  }
  return removed;
}

JitArtifacts build_jit_artifacts(
    const format::ProfileLayout& layout,
    const std::vector<perfdata::TrackedMapping>& mappings,
    const std::map<int32_t, uint32_t>& uids, size_t first_key_index) {
  Builder builder(layout, first_key_index);
  std::set<std::pair<int32_t, std::string>> seen;
  for (const perfdata::TrackedMapping& m : mappings) {
    if (!is_jitdump_mapping(m) || !seen.emplace(m.pid, m.path).second) continue;
    auto uid = uids.find(m.pid);
    builder.add_dump(m.pid, m.open_path.empty() ? m.path : m.open_path,
                     uid != uids.end() ? uid->second : ::geteuid());
  }
  return builder.take();
}

}  // namespace runner::finalize
