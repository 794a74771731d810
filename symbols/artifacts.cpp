// build_artifacts(): dedup mappings by file identity, parse every unique file
// once on a worker pool, write per-file artifacts, compute per-pid views.
//
// Threading: workers claim unique-file indexes from one atomic counter and
// write only into their own FileResult slot (and their own output files); the
// calling thread merges results after joining, so the output (including error
// counts and examples) does not depend on scheduling.
#include <algorithm>
#include <atomic>
#include <thread>
#include <tuple>
#include <utility>

#include "base/base.hpp"
#include "format/format.hpp"
#include "symbols/elf_image.hpp"
#include "symbols/module_cache.hpp"
#include "symbols/symbols.hpp"

namespace runner::symbols {
namespace {

struct Identity {
  std::string path;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0;
  auto tie() const { return std::tie(path, dev_major, dev_minor, inode); }
  bool operator<(const Identity& o) const { return tie() < o.tie(); }
  bool known() const { return inode != 0; }
};

struct UniqueFile {
  Identity identity;
  std::string key;
  std::vector<std::string> open_paths;  // candidates, first mapping first
};

struct FileResult {
  ModuleInfo info;
  std::optional<ElfSummary> summary;
  std::optional<ModuleDebugInfo> debug_info;
  std::vector<FileError> errors;
  bool from_cache = false;
  bool stored = false;  // a new cache entry was written
};

bool looks_like_libc(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.starts_with("libc.so") || base.starts_with("libc-");
}

// Only files named by an absolute path with a known identity are cached
// (not the vDSO copy, which is a new temporary file every run).
bool cacheable(const UniqueFile& file) {
  return file.identity.known() && file.identity.path.starts_with('/');
}

struct OpenedFile {
  std::optional<ElfImage> image;
  std::string open_path;
};

// Tries every recorded way to reach the file (a pid's /proc/<pid>/root may
// be gone by now while another pid's still works).
base::Result<OpenedFile> open_first(const UniqueFile& file) {
  base::Error open_error("no path to open");
  for (const std::string& candidate : file.open_paths) {
    base::Result<ElfImage> opened = ElfImage::open(candidate);
    if (opened) return OpenedFile{std::move(opened).value(), candidate};
    open_error = std::move(opened).error();
    // Only a failure to open at all is worth retrying elsewhere.
    if (open_error.code() == 0) break;
  }
  return open_error;
}

// Parses the file: symbols, unwind data, then (the image unmapped first)
// debug info. Nothing is written.
ModuleOutputs compute_outputs(OpenedFile& opened,
                              const std::string& recorded_path,
                              const ArtifactOptions& options) {
  ModuleOutputs out;
  auto fail = [&](std::string reason, const std::string& message) {
    out.errors.push_back(
        FileError{std::move(reason), recorded_path + ": " + message});
  };
  base::Result<std::vector<Symbol>> symbols =
      collect_symbols(*opened.image, opened.open_path, options.debug);
  if (symbols) {
    const std::vector<Symbol>& syms = *symbols;
    out.symbols_map = format::format_symbols_map(syms);
    out.symbol_count = syms.size();
    out.symbols_min = syms.front().addr;
    for (const Symbol& s : syms) {
      out.symbols_min = std::min(out.symbols_min, s.addr);
      out.symbols_max_end = std::max(out.symbols_max_end, s.addr + s.size);
    }
  } else {
    fail("no_symbols", symbols.error().what());
  }
  base::Result<UnwindData> unwind = opened.image->unwind_data(recorded_path);
  if (unwind) {
    out.unwind_data = format::encode_unwind_data(*unwind);
  } else {
    fail("no_eh_frame", unwind.error().what());
  }
  opened.image.reset();  // unmap before the DWARF pass maps the file again
  if (!options.debug_info || !symbols) return out;
  base::Result<ModuleDebugInfo> debug =
      read_debug_info(opened.open_path, recorded_path, *symbols, options.debug);
  if (debug) {
    out.debug_info = std::move(debug).value();
  } else {
    fail("no_debug_info", debug.error().what());
  }
  return out;
}

// Writes the outputs of one file into the profile folder and fills its
// result: the same whether they were just computed or came from the cache.
void write_outputs(ModuleOutputs outputs, const UniqueFile& file,
                   const ArtifactOptions& options, FileResult& result) {
  const format::ProfileLayout layout(options.out_dir);
  result.errors = std::move(outputs.errors);
  auto write = [&](const std::string& path, auto&& bytes) {
    base::Status written = base::write_file_atomic(path, bytes);
    if (!written)
      result.errors.push_back(FileError{
          "write_failed", file.identity.path + ": " + written.error().what()});
    return static_cast<bool>(written);
  };
  if (outputs.symbols_map &&
      write(layout.symbols_map(file.key), *outputs.symbols_map)) {
    result.info.has_symbols = true;
    result.info.symbol_count = outputs.symbol_count;
    result.info.symbols_min = outputs.symbols_min;
    result.info.symbols_max_end = outputs.symbols_max_end;
  }
  if (outputs.unwind_data &&
      write(layout.unwind_data(file.key), *outputs.unwind_data)) {
    result.info.has_unwind = true;
  }
  if (outputs.debug_info) {
    result.info.has_debug_info = true;
    result.debug_info = std::move(outputs.debug_info);
  }
  bool no_debug_info = std::any_of(
      result.errors.begin(), result.errors.end(),
      [](const FileError& e) { return e.reason == "no_debug_info"; });
  if (no_debug_info && looks_like_libc(file.identity.path)) {
    RUNNER_LOG("symbols", kWarning)
        << "no debug info for " << file.identity.path
        << "; install libc6-dbg (Debian/Ubuntu) or glibc-debuginfo for "
           "source locations in libc";
  }
}

void process_file(const UniqueFile& file, const ArtifactOptions& options,
                  const ModuleCache* cache, FileResult& result) {
  result.info.key = file.key;
  result.info.path = file.identity.path;
  base::Result<OpenedFile> opened = open_first(file);
  if (!opened) {
    result.errors.push_back(
        FileError{std::string(classify_open_error(opened.error())),
                  file.identity.path + ": " + opened.error().what()});
    return;
  }
  result.summary = opened->image->summary();
  result.info.build_id = result.summary->build_id;
  std::optional<CacheKey> key;
  if (cache != nullptr && cacheable(file))
    key = module_cache_key(*opened->image, opened->open_path,
                           file.identity.path, options);
  if (key) {
    if (std::optional<ModuleOutputs> hit = cache->lookup(*key)) {
      result.from_cache = true;
      write_outputs(std::move(*hit), file, options, result);
      return;
    }
  }
  ModuleOutputs outputs = compute_outputs(*opened, file.identity.path, options);
  if (key) {
    base::Status stored = cache->store(*key, outputs);
    result.stored = static_cast<bool>(stored);
    if (!stored)
      RUNNER_LOG("symbols", kDebug) << "not cached: " << file.identity.path
                                    << ": " << stored.error().what();
  }
  write_outputs(std::move(outputs), file, options, result);
}

// The cache of `options`, nullopt when off or unusable (a warning says why).
std::optional<ModuleCache> open_cache(const ArtifactOptions& options) {
  if (options.cache_dir.empty() || options.cache_max_bytes == 0)
    return std::nullopt;
  base::Result<ModuleCache> cache =
      ModuleCache::open(options.cache_dir, options.cache_max_bytes);
  if (!cache) {
    RUNNER_LOG("symbols", kWarning)
        << "finalize cache not used: " << cache.error().what();
    return std::nullopt;
  }
  return std::move(cache).value();
}

// process_file() of every file on a worker pool; then the cache's
// eviction, when new entries were written.
std::vector<FileResult> process_files(const std::vector<UniqueFile>& files,
                                      const ArtifactOptions& options) {
  std::optional<ModuleCache> cache = open_cache(options);
  const ModuleCache* cache_ptr = cache ? &*cache : nullptr;
  std::vector<FileResult> results(files.size());
  unsigned threads = options.threads != 0
                         ? options.threads
                         : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, files.size()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < files.size();
         i = next.fetch_add(1)) {
      process_file(files[i], options, cache_ptr, results[i]);
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }
  bool stored = false;
  for (const FileResult& result : results) stored |= result.stored;
  if (stored) cache->evict();
  return results;
}

// 1. Identities, one per mapping. A mapping without dev/inode joins the
//    first known identity of its path, if any, so it does not create a
//    phantom file.
std::vector<Identity> mapping_identities(
    std::span<const ModuleMapping> mappings) {
  std::map<std::string, Identity> first_known;
  for (const ModuleMapping& m : mappings) {
    if (m.inode == 0) continue;
    Identity id{m.path, m.dev_major, m.dev_minor, m.inode};
    auto it = first_known.find(m.path);
    if (it == first_known.end() || id < it->second) first_known[m.path] = id;
  }
  std::vector<Identity> identities;
  identities.reserve(mappings.size());
  for (const ModuleMapping& m : mappings) {
    Identity id{m.path, m.dev_major, m.dev_minor, m.inode};
    if (!id.known()) {
      auto it = first_known.find(m.path);
      if (it != first_known.end()) id = it->second;
    }
    identities.push_back(std::move(id));
  }
  return identities;
}

// 2. The unique files, keyed in (path, identity) order: stable across runs
//    for the same set. mapping_file[i] is the file of mappings[i]; each
//    file lists the paths it can be opened by.
std::vector<UniqueFile> unique_files(std::span<const ModuleMapping> mappings,
                                     const std::vector<Identity>& identities,
                                     std::vector<size_t>& mapping_file) {
  std::map<Identity, size_t> file_index;
  for (const Identity& id : identities) file_index.emplace(id, 0);
  std::vector<UniqueFile> files;
  files.reserve(file_index.size());
  for (auto& [id, index] : file_index) {
    index = files.size();
    files.push_back(UniqueFile{id, make_module_key(files.size(), id.path), {}});
  }
  mapping_file.assign(mappings.size(), 0);
  for (size_t i = 0; i < mappings.size(); ++i) {
    size_t index = file_index.at(identities[i]);
    mapping_file[i] = index;
    const ModuleMapping& m = mappings[i];
    const std::string& open = m.open_path.empty() ? m.path : m.open_path;
    std::vector<std::string>& candidates = files[index].open_paths;
    if (std::find(candidates.begin(), candidates.end(), open) ==
        candidates.end()) {
      candidates.push_back(open);
    }
  }
  return files;
}

void count_error(ArtifactSet& out, const std::string& reason,
                 const std::string& example) {
  ++out.errors[reason];
  out.error_examples.emplace(reason, example);
}

// The modules, debug info, errors and cache hits of the parsed files.
void collect_results(std::vector<FileResult>& results, ArtifactSet& out) {
  for (FileResult& result : results) {
    if (result.from_cache) ++out.cache_hits;
    for (const FileError& e : result.errors) {
      count_error(out, e.reason, e.example);
      if (e.reason == "write_failed") out.write_failures.push_back(e.example);
    }
    if (result.debug_info) {
      out.debug_info.emplace(result.info.key, std::move(*result.debug_info));
    }
    out.modules.push_back(result.info);
  }
}

// 4. Per-pid views: one per mapping (a file mapped twice by a pid, at two
//    load biases, has two), in (pid, key index, start) order.
void add_pid_views(std::span<const ModuleMapping> mappings,
                   const std::vector<FileResult>& results,
                   const std::vector<size_t>& mapping_file, ArtifactSet& out) {
  std::map<std::tuple<int32_t, size_t, uint64_t>, PidModule> per_pid;
  for (size_t i = 0; i < mappings.size(); ++i) {
    const ModuleMapping& m = mappings[i];
    const FileResult& result = results[mapping_file[i]];
    if (!result.summary) continue;  // file unusable: already counted
    const ModuleInfo& info = result.info;
    if (!info.has_symbols && !info.has_unwind) continue;
    base::Result<uint64_t> bias =
        compute_load_bias(result.summary->loads, m.start, m.end, m.pgoff);
    if (!bias) {
      count_error(out, "no_load_segment", m.path + ": " + bias.error().what());
      continue;
    }
    PidModule pm;
    pm.key = info.key;
    pm.path = m.path;
    pm.load_bias = *bias;
    pm.has_symbols = info.has_symbols;
    pm.has_unwind = info.has_unwind;
    pm.has_debug_info = info.has_debug_info;
    pm.avma_range = Range{m.start, m.end};
    pm.base_avma = result.summary->base_svma + *bias;
    pm.timestamp = m.timestamp;
    per_pid[{m.pid, mapping_file[i], m.start}] = std::move(pm);
  }
  for (auto& [pid_file, pm] : per_pid) {
    out.by_pid[std::get<0>(pid_file)].push_back(std::move(pm));
  }
}

}  // namespace

std::string make_module_key(std::size_t index, std::string_view path) {
  return format::ProfileLayout::module_key(index, path);
}

base::Result<ArtifactSet> build_artifacts(
    std::span<const ModuleMapping> mappings, const ArtifactOptions& options) {
  RUNNER_RETURN_IF_ERROR(base::make_directories(options.out_dir),
                         "creating artifact folder");
  const std::vector<Identity> identities = mapping_identities(mappings);
  std::vector<size_t> mapping_file;
  const std::vector<UniqueFile> files =
      unique_files(mappings, identities, mapping_file);
  // 3. Parse each unique file once, in parallel (or take it from the cache).
  std::vector<FileResult> results = process_files(files, options);
  ArtifactSet out;
  collect_results(results, out);
  add_pid_views(mappings, results, mapping_file, out);
  return out;
}

}  // namespace runner::symbols
