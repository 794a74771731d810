// The finalize cache (module_cache.hpp): key, entry format, and the folder.
//
// Payload (little endian, strings and byte strings as u64 length + bytes):
//   str key text
//   u8 flags: 1 symbols map, 2 unwind data, 4 debug info
//   u64 symbol_count, u64 symbols_min, u64 symbols_max_end
//   [str symbols map] [str unwind data]
//   [str object_path, u64 addr_min, u64 addr_max, u64 count,
//    count x (u64 addr, u64 size, str name, str file, u8 has_line, u32 line)]
//   u64 count, count x (str reason, str example)
#include "symbols/module_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <random>

#include "base/base.hpp"
#include "format/format.hpp"

namespace runner::symbols {
namespace {

constexpr std::string_view kLog = "symbols";
constexpr char kMagic[8] = {'R', 'N', 'R', 'F', 'C', 'A', 'C', 'H'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8;
constexpr std::string_view kEntrySuffix = ".entry";
constexpr std::string_view kTempPrefix = ".tmp-";
constexpr int64_t kStaleTempSeconds = 3600;
// Smallest encoding of one debug entry and one error (for count checks).
constexpr uint64_t kMinDebugEntry = 8 + 8 + 8 + 8 + 1 + 4;
constexpr uint64_t kMinError = 8 + 8;
constexpr uint8_t kHasSymbols = 1, kHasUnwind = 2, kHasDebug = 4;

uint64_t fnv1a(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

uint64_t fnv1a(std::string_view text) {
  return fnv1a(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

std::string hex64(uint64_t v) { return base::hex_number(v, 16); }

int64_t ns(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// "<dev> <ino> <size> <mtime ns> <ctime ns>" of a file. The mtime can be set
// back (cp -p, rsync -t, a build that restores it); the ctime cannot, and
// any write, rename onto or restored mtime changes it.
std::string identity(const struct stat& st) {
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " +
         std::to_string(st.st_size) + " " + std::to_string(ns(st.st_mtim)) +
         " " + std::to_string(ns(st.st_ctim));
}

// A length-prefixed line, so no path can read as two fields.
void add_field(std::string& text, std::string_view name,
               std::string_view value) {
  text += name;
  text += ' ';
  text += std::to_string(value.size());
  text += ' ';
  text += value;
  text += '\n';
}

void put_str(format::ByteWriter& w, std::string_view s) {
  w.u64(s.size());
  w.bytes(s);
}

std::string get_str(format::ByteReader& r) {
  uint64_t size = r.u64();
  const uint8_t* data = r.take(size);
  if (data == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(data), size);
}

void put_debug_info(format::ByteWriter& w, const ModuleDebugInfo& info) {
  put_str(w, info.object_path);
  w.u64(info.addr_min);
  w.u64(info.addr_max);
  w.u64(info.entries.size());
  for (const DebugInfoEntry& e : info.entries) {
    w.u64(e.addr);
    w.u64(e.size);
    put_str(w, e.name);
    put_str(w, e.file);
    w.u8(e.line ? 1 : 0);
    w.u32(e.line.value_or(0));
  }
}

ModuleDebugInfo get_debug_info(format::ByteReader& r) {
  ModuleDebugInfo info;
  info.object_path = get_str(r);
  info.addr_min = r.u64();
  info.addr_max = r.u64();
  uint64_t count = r.u64();
  if (!r.fits(count, kMinDebugEntry)) {
    r.fail();
    return info;
  }
  info.entries.reserve(count);
  for (uint64_t i = 0; i < count && r.ok(); ++i) {
    DebugInfoEntry e;
    e.addr = r.u64();
    e.size = r.u64();
    e.name = get_str(r);
    e.file = get_str(r);
    uint8_t has_line = r.u8();
    uint32_t line = r.u32();
    if (has_line > 1) r.fail();
    if (has_line == 1) e.line = line;
    info.entries.push_back(std::move(e));
  }
  return info;
}

std::vector<uint8_t> encode_payload(const std::string& key_text,
                                    const ModuleOutputs& out) {
  format::ByteWriter w;
  put_str(w, key_text);
  w.u8((out.symbols_map ? kHasSymbols : 0) |
       (out.unwind_data ? kHasUnwind : 0) | (out.debug_info ? kHasDebug : 0));
  w.u64(out.symbol_count);
  w.u64(out.symbols_min);
  w.u64(out.symbols_max_end);
  if (out.symbols_map) put_str(w, *out.symbols_map);
  if (out.unwind_data) {
    w.u64(out.unwind_data->size());
    w.bytes(*out.unwind_data);
  }
  if (out.debug_info) put_debug_info(w, *out.debug_info);
  w.u64(out.errors.size());
  for (const FileError& e : out.errors) {
    put_str(w, e.reason);
    put_str(w, e.example);
  }
  return w.take();
}

base::Result<ModuleOutputs> decode_payload(format::ByteReader& r,
                                           const std::string& key_text) {
  if (get_str(r) != key_text || !r.ok())
    return base::Error("cache entry of another key");
  ModuleOutputs out;
  uint8_t flags = r.u8();
  if ((flags & ~(kHasSymbols | kHasUnwind | kHasDebug)) != 0)
    return base::Error("cache entry with unknown flags");
  out.symbol_count = r.u64();
  out.symbols_min = r.u64();
  out.symbols_max_end = r.u64();
  if ((flags & kHasSymbols) != 0) out.symbols_map = get_str(r);
  if ((flags & kHasUnwind) != 0) {
    std::span<const uint8_t> bytes = r.bytes(r.u64());
    out.unwind_data.emplace(bytes.begin(), bytes.end());
  }
  if ((flags & kHasDebug) != 0) out.debug_info = get_debug_info(r);
  uint64_t errors = r.u64();
  if (!r.fits(errors, kMinError)) return base::Error("truncated cache entry");
  for (uint64_t i = 0; i < errors && r.ok(); ++i) {
    std::string reason = get_str(r);
    out.errors.push_back(FileError{std::move(reason), get_str(r)});
  }
  if (!r.ok() || r.remaining() != 0)
    return base::Error("truncated or overlong cache entry");
  return out;
}

std::string random_suffix() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return hex64(gen());
}

bool owned_regular(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid();
}

// The whole content of an open regular file of `size` bytes.
base::Result<std::vector<uint8_t>> read_all(int fd, size_t size) {
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n =
        ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return base::errno_error("read");
    if (n == 0) return base::Error("file shrank while read");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

// The entries of the folder (".entry" regular files of ours); removes what
// must not be there (anything else named like an entry, stale temp files).
std::vector<base::CacheEntry> list_entries(int dir_fd) {
  std::vector<base::CacheEntry> out;
  const time_t now = ::time(nullptr);
  for (std::string& name : base::entry_names(dir_fd)) {
    bool temp = name.starts_with(kTempPrefix);
    if (!temp && !name.ends_with(kEntrySuffix)) continue;
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (temp) {
      if (now - st.st_mtim.tv_sec > kStaleTempSeconds)
        ::unlinkat(dir_fd, name.c_str(), 0);
    } else if (!owned_regular(st)) {
      ::unlinkat(dir_fd, name.c_str(), 0);  // never follows a symlink
    } else {
      out.push_back(base::CacheEntry{
          std::move(name), static_cast<uint64_t>(st.st_size), st.st_mtim});
    }
  }
  return out;
}

}  // namespace

std::optional<CacheKey> module_cache_key(const ElfImage& image,
                                         const std::string& open_path,
                                         const std::string& recorded_path,
                                         const ArtifactOptions& options) {
  const ElfSummary& summary = image.summary();
  if (summary.build_id.empty() || summary.build_id.size() > 64)
    return std::nullopt;
  struct stat st;
  if (::stat(open_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_dev != image.device() || st.st_ino != image.inode())
    return std::nullopt;
  CacheKey key{base::to_hex(summary.build_id), {}};
  key.text = "runner finalize cache " + std::to_string(kModuleCacheVersion) +
             "\nbuild-id " + key.build_id + "\n";
  add_field(key.text, "path", recorded_path);
  add_field(key.text, "file", identity(st));
  add_field(key.text, "debug-info", options.debug_info ? "1" : "0");
  for (const std::string& root : options.debug.roots)
    add_field(key.text, "root", root);
  // A separate debug file installed, removed or replaced changes the
  // outputs: the identity of each candidate that exists is part of the key
  // (by position, so /proc/<pid>/root/ prefixes do not change it).
  std::vector<DebugCandidate> candidates =
      debug_file_candidates(open_path, summary, options.debug);
  for (size_t i = 0; i < candidates.size(); ++i) {
    struct stat dst;
    if (::stat(candidates[i].path.c_str(), &dst) == 0)
      add_field(key.text, "debug-file",
                std::to_string(i) + " " + identity(dst));
  }
  return key;
}

std::string cache_entry_name(const CacheKey& key) {
  return key.build_id + "-" + hex64(fnv1a(key.text)) +
         std::string(kEntrySuffix);
}

std::vector<uint8_t> encode_cache_entry(const std::string& key_text,
                                        const ModuleOutputs& outputs) {
  std::vector<uint8_t> payload = encode_payload(key_text, outputs);
  format::ByteWriter w;
  w.reserve(kHeaderSize + payload.size());
  w.bytes(std::string_view(kMagic, sizeof(kMagic)));
  w.u32(kModuleCacheVersion);
  w.u32(0);
  w.u64(payload.size());
  w.u64(fnv1a(payload));
  w.bytes(payload);
  return w.take();
}

base::Result<ModuleOutputs> decode_cache_entry(std::span<const uint8_t> bytes,
                                               const std::string& key_text) {
  format::ByteReader r(bytes);
  std::span<const uint8_t> magic = r.bytes(sizeof(kMagic));
  if (!r.ok() || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0)
    return base::Error("not a cache entry (bad magic)");
  if (r.u32() != kModuleCacheVersion || r.u32() != 0)
    return base::Error("cache entry of another version");
  uint64_t size = r.u64();
  uint64_t checksum = r.u64();
  if (!r.ok() || size != r.remaining())
    return base::Error("cache entry of the wrong size");
  std::span<const uint8_t> payload = r.bytes(size);
  if (fnv1a(payload) != checksum)
    return base::Error("cache entry with a bad checksum");
  format::ByteReader pr(payload);
  return decode_payload(pr, key_text);
}

base::Result<ModuleCache> ModuleCache::open(const std::string& dir,
                                            uint64_t max_bytes) {
  if (max_bytes == 0) return base::Error("the cache is off (cap 0)");
  auto fd = base::open_cache_folder(dir);
  if (!fd) return std::move(fd.error());
  return ModuleCache(std::move(*fd), max_bytes);
}

base::Result<std::vector<uint8_t>> ModuleCache::read_entry(
    const std::string& name) const {
  base::UniqueFd fd(::openat(dir_.get(), name.c_str(),
                             O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return base::errno_error("open");
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return base::errno_error("stat");
  if (!owned_regular(st) || st.st_nlink != 1)
    return base::Error("not a regular file of ours with one link");
  if (static_cast<uint64_t>(st.st_size) > max_bytes_ ||
      static_cast<uint64_t>(st.st_size) < kHeaderSize)
    return base::Error("size out of bounds");
  RUNNER_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          read_all(fd.get(), static_cast<size_t>(st.st_size)),
                          "read");
  // Recently used: eviction goes by mtime.
  const struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ::futimens(fd.get(), times);
  return bytes;
}

std::optional<ModuleOutputs> ModuleCache::lookup(const CacheKey& key) const {
  const std::string name = cache_entry_name(key);
  base::Result<std::vector<uint8_t>> bytes = read_entry(name);
  if (!bytes) {
    if (bytes.error().code() != ENOENT)
      RUNNER_LOG(kLog, kDebug)
          << "cache entry " << name << " ignored: " << bytes.error().what();
    return std::nullopt;
  }
  base::Result<ModuleOutputs> outputs = decode_cache_entry(*bytes, key.text);
  if (!outputs) {
    RUNNER_LOG(kLog, kDebug)
        << "cache entry " << name << " ignored: " << outputs.error().what();
    return std::nullopt;
  }
  return std::move(outputs).value();
}

base::Status ModuleCache::store(const CacheKey& key,
                                const ModuleOutputs& outputs) const {
  std::vector<uint8_t> bytes = encode_cache_entry(key.text, outputs);
  if (bytes.size() > max_bytes_) return {};  // would be evicted at once
  const std::string temp = std::string(kTempPrefix) + random_suffix();
  base::UniqueFd fd(
      ::openat(dir_.get(), temp.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return base::errno_error("create cache entry");
  base::Status written = base::write_all(
      fd.get(), std::string_view(reinterpret_cast<const char*>(bytes.data()),
                                 bytes.size()));
  if (written && ::close(fd.release()) != 0)
    written = base::errno_error("close cache entry");
  const std::string name = cache_entry_name(key);
  if (written &&
      ::renameat(dir_.get(), temp.c_str(), dir_.get(), name.c_str()) != 0)
    written = base::errno_error("rename cache entry");
  if (!written) ::unlinkat(dir_.get(), temp.c_str(), 0);
  return written;
}

void ModuleCache::evict() const {
  const uint64_t kept = base::evict_least_recently_used(
      dir_.get(), list_entries(dir_.get()), max_bytes_);
  RUNNER_LOG(kLog, kDebug) << "finalize cache: " << kept << " bytes kept";
}

}  // namespace runner::symbols
