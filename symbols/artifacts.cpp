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

struct FileError {
  std::string reason;
  std::string example;
};

struct FileResult {
  ModuleInfo info;
  std::optional<ElfSummary> summary;
  std::optional<ModuleDebugInfo> debug_info;
  std::vector<FileError> errors;
};

bool looks_like_libc(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.starts_with("libc.so") || base.starts_with("libc-");
}

void process_file(const UniqueFile& file, const ArtifactOptions& options,
                  FileResult& result) {
  result.info.key = file.key;
  result.info.path = file.identity.path;
  auto fail = [&](std::string reason, const std::string& message) {
    result.errors.push_back(
        FileError{std::move(reason), file.identity.path + ": " + message});
  };

  // Try every recorded way to reach the file (a pid's /proc/<pid>/root may
  // be gone by now while another pid's still works).
  std::optional<ElfImage> image;
  std::string open_path;
  base::Error open_error("no path to open");
  for (const std::string& candidate : file.open_paths) {
    base::Result<ElfImage> opened = ElfImage::open(candidate);
    if (opened) {
      image.emplace(std::move(opened).value());
      open_path = candidate;
      break;
    }
    open_error = std::move(opened).error();
    // Only a failure to open at all is worth retrying elsewhere.
    if (open_error.code() == 0) break;
  }
  if (!image) {
    fail(std::string(classify_open_error(open_error)), open_error.what());
    return;
  }
  result.summary = image->summary();
  result.info.build_id = result.summary->build_id;

  base::Result<std::vector<Symbol>> symbols =
      collect_symbols(*image, open_path, options.debug);
  if (symbols) {
    const std::vector<Symbol>& syms = *symbols;
    std::string path =
        format::ProfileLayout(options.out_dir).symbols_map(file.key);
    base::Status written =
        base::write_file_atomic(path, format::format_symbols_map(syms));
    if (written) {
      result.info.has_symbols = true;
      result.info.symbol_count = syms.size();
      result.info.symbols_min = syms.front().addr;
      for (const Symbol& s : syms) {
        result.info.symbols_min = std::min(result.info.symbols_min, s.addr);
        result.info.symbols_max_end =
            std::max(result.info.symbols_max_end, s.addr + s.size);
      }
    } else {
      fail("write_failed", written.error().what());
    }
  } else {
    fail("no_symbols", symbols.error().what());
  }

  base::Result<UnwindData> unwind = image->unwind_data(file.identity.path);
  if (unwind) {
    std::string path =
        format::ProfileLayout(options.out_dir).unwind_data(file.key);
    base::Status written =
        base::write_file_atomic(path, format::encode_unwind_data(*unwind));
    if (written) {
      result.info.has_unwind = true;
    } else {
      fail("write_failed", written.error().what());
    }
  } else {
    fail("no_eh_frame", unwind.error().what());
  }
  image.reset();  // unmap before the DWARF pass maps the file again

  if (options.debug_info && symbols) {
    base::Result<ModuleDebugInfo> debug =
        read_debug_info(open_path, file.identity.path, *symbols, options.debug);
    if (debug) {
      result.info.has_debug_info = true;
      result.debug_info = std::move(debug).value();
    } else {
      fail("no_debug_info", debug.error().what());
      if (looks_like_libc(file.identity.path)) {
        RUNNER_LOG("symbols", kWarning)
            << "no debug info for " << file.identity.path
            << "; install libc6-dbg (Debian/Ubuntu) or glibc-debuginfo for "
               "source locations in libc";
      }
    }
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

  // 1. Identities. A mapping without dev/inode joins the first known
  //    identity of its path, if any, so it does not create a phantom file.
  std::map<std::string, Identity> first_known;
  for (const ModuleMapping& m : mappings) {
    if (m.inode == 0) continue;
    Identity id{m.path, m.dev_major, m.dev_minor, m.inode};
    auto it = first_known.find(m.path);
    if (it == first_known.end() || id < it->second) first_known[m.path] = id;
  }
  std::vector<Identity> mapping_identity;
  mapping_identity.reserve(mappings.size());
  std::map<Identity, size_t> file_index;
  for (const ModuleMapping& m : mappings) {
    Identity id{m.path, m.dev_major, m.dev_minor, m.inode};
    if (!id.known()) {
      auto it = first_known.find(m.path);
      if (it != first_known.end()) id = it->second;
    }
    file_index.emplace(id, 0);
    mapping_identity.push_back(std::move(id));
  }

  // 2. Keys in (path, identity) order: stable across runs for the same set.
  std::vector<UniqueFile> files;
  files.reserve(file_index.size());
  for (auto& [id, index] : file_index) {
    index = files.size();
    files.push_back(UniqueFile{id, make_module_key(files.size(), id.path), {}});
  }
  std::vector<size_t> mapping_file(mappings.size());
  for (size_t i = 0; i < mappings.size(); ++i) {
    size_t index = file_index.at(mapping_identity[i]);
    mapping_file[i] = index;
    const ModuleMapping& m = mappings[i];
    const std::string& open = m.open_path.empty() ? m.path : m.open_path;
    std::vector<std::string>& candidates = files[index].open_paths;
    if (std::find(candidates.begin(), candidates.end(), open) ==
        candidates.end()) {
      candidates.push_back(open);
    }
  }

  // 3. Parse each unique file once, in parallel.
  std::vector<FileResult> results(files.size());
  unsigned threads = options.threads != 0
                         ? options.threads
                         : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, files.size()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < files.size();
         i = next.fetch_add(1)) {
      process_file(files[i], options, results[i]);
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

  ArtifactSet out;
  auto count_error = [&out](const std::string& reason,
                            const std::string& example) {
    ++out.errors[reason];
    out.error_examples.emplace(reason, example);
  };
  for (FileResult& result : results) {
    for (const FileError& e : result.errors) {
      count_error(e.reason, e.example);
      if (e.reason == "write_failed") out.write_failures.push_back(e.example);
    }
    if (result.debug_info) {
      out.debug_info.emplace(result.info.key, std::move(*result.debug_info));
    }
    out.modules.push_back(result.info);
  }

  // 4. Per-pid views: one per mapping (a file mapped twice by a pid, at
  //    two load biases, has two), in (pid, key index, start) order.
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
      count_error("no_load_segment", m.path + ": " + bias.error().what());
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
  return out;
}

}  // namespace runner::symbols
