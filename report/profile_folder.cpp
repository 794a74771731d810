#include "report/profile_folder.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "format/format.hpp"

namespace runner::report {
namespace {

uint64_t json_u64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return static_cast<uint64_t>(v.get<int64_t>());
  return 0;
}

constexpr std::string_view kJsonSpace = " \t\r\n";

// Index just past the JSON string that starts at t[i] == '"', or npos.
size_t skip_json_string(std::string_view t, size_t i) {
  for (++i; i < t.size(); i += 2) {
    i = t.find_first_of("\"\\", i);
    if (i == std::string_view::npos) return i;
    if (t[i] == '"') return i + 1;
  }
  return std::string_view::npos;
}

// Index just past the JSON value that starts at t[i], or npos.
size_t skip_json_value(std::string_view t, size_t i) {
  int depth = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '"') {
      i = skip_json_string(t, i);
      if (i == std::string_view::npos || depth == 0) return i;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return i;
      if (--depth == 0) return i + 1;
    } else if (c == ',' && depth == 0) {
      return i;
    }
    ++i;
  }
  return std::string_view::npos;
}

// The top-level object `text` without its members named in `drop`, found by
// a scan that only follows strings and brackets (no tokens are built). Any
// surprise returns the text unchanged: the full parser decides then.
std::string drop_json_members(std::string_view t,
                              std::initializer_list<std::string_view> drop) {
  const std::string original(t);
  size_t i = t.find_first_not_of(kJsonSpace);
  if (i == std::string_view::npos || t[i] != '{') return original;
  std::string out = "{";
  bool any = false, dropped = false;
  ++i;
  while (true) {
    i = t.find_first_not_of(kJsonSpace, i);
    if (i == std::string_view::npos) return original;
    if (t[i] == '}' && !any && !dropped) break;
    if (t[i] != '"') return original;
    const size_t member = i;
    const size_t key_end = skip_json_string(t, i);
    if (key_end == std::string_view::npos) return original;
    const std::string_view key = t.substr(i + 1, key_end - i - 2);
    i = t.find_first_not_of(kJsonSpace, key_end);
    if (i == std::string_view::npos || t[i] != ':') return original;
    i = t.find_first_not_of(kJsonSpace, i + 1);
    if (i == std::string_view::npos) return original;
    const size_t value_end = skip_json_value(t, i);
    if (value_end == std::string_view::npos) return original;
    if (std::find(drop.begin(), drop.end(), key) != drop.end()) {
      dropped = true;
    } else {
      if (any) out += ',';
      out.append(t.substr(member, value_end - member));
      any = true;
    }
    i = t.find_first_not_of(kJsonSpace, value_end);
    if (i == std::string_view::npos) return original;
    if (t[i] == '}') break;
    if (t[i] != ',') return original;
    ++i;
  }
  out += '}';
  return out;
}

// Values of an artifact's JSON with a wrong type or range: each is skipped,
// and one warning per top-level key names the file, the key path of the
// first one and how many there were (a hostile file cannot flood the
// output).
class MetadataChecker {
 public:
  explicit MetadataChecker(std::string file) : file_(std::move(file)) {}

  void problem(const std::string& path, const std::string& cause) {
    const std::string section = path.substr(0, path.find_first_of(".["));
    Problem& p = problems_[section];
    if (p.count++ != 0) return;
    // Keys come from the file: a huge one is cut.
    constexpr size_t kMaxShown = 200;
    p.first =
        path.size() <= kMaxShown ? path : path.substr(0, kMaxShown) + "...";
    p.first += ": " + cause;
  }

  // object[key] when present with the type `type`; nullptr when absent, or
  // (noted) of another type. `path` names it in the warning (default: key).
  const nlohmann::json* member(const nlohmann::json& object, const char* key,
                               nlohmann::json::value_t type,
                               const std::string& path = "") {
    auto it = object.find(key);
    if (it == object.end()) return nullptr;
    if (it->type() != type) {
      problem(path.empty() ? key : path, std::string("expected ") +
                                             nlohmann::json(type).type_name() +
                                             ", got " + it->type_name());
      return nullptr;
    }
    return &*it;
  }

  const std::string* string(const nlohmann::json& v, const std::string& path) {
    if (v.is_string()) return v.get_ptr<const std::string*>();
    problem(path, std::string("expected string, got ") + v.type_name());
    return nullptr;
  }

  // An address or size: an integer (negative ones wrap, as load biases may).
  std::optional<uint64_t> u64(const nlohmann::json& v,
                              const std::string& path) {
    if (v.is_number_integer()) return json_u64(v);
    problem(path, std::string("expected an integer, got ") + v.type_name());
    return std::nullopt;
  }

  std::optional<int32_t> pid(const nlohmann::json& v, const std::string& path) {
    if (v.is_number_integer()) {
      const int64_t n = v.is_number_unsigned()
                            ? static_cast<int64_t>(std::min<uint64_t>(
                                  v.get<uint64_t>(), INT64_MAX))
                            : v.get<int64_t>();
      if (n >= 0 && n <= INT32_MAX) return static_cast<int32_t>(n);
    }
    problem(path, "expected a pid, got " +
                      v.dump(-1, ' ', false,
                             nlohmann::json::error_handler_t::replace));
    return std::nullopt;
  }

  // A pid written as an object key ("1234").
  std::optional<int32_t> pid_key(const std::string& text,
                                 const std::string& path) {
    int32_t pid = 0;
    auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), pid);
    if (ec == std::errc() && end == text.data() + text.size() && pid >= 0)
      return pid;
    problem(path, "not a pid");
    return std::nullopt;
  }

  void flush(std::vector<std::string>& warnings) {
    for (const auto& [section, p] : problems_) {
      std::string text = file_ + ": " + p.first;
      if (p.count > 1)
        text += " (and " + std::to_string(p.count - 1) + " more in " + section +
                ")";
      warnings.push_back(text + ": ignored");
    }
    problems_.clear();
  }

 private:
  struct Problem {
    std::string first;
    uint64_t count = 0;
  };
  std::string file_;
  std::map<std::string, Problem> problems_;
};

// mapped_process_module_symbols and mapped_process_unwind_data_by_pid:
// {"<pid>": [entry, ...]}; each malformed entry is skipped and noted.
std::map<int32_t, PidModules> read_pid_modules(const nlohmann::json& meta,
                                               MetadataChecker& check) {
  using Type = nlohmann::json::value_t;
  std::map<int32_t, PidModules> pids;
  // Calls read(pid, entry, path) for each entry of each pid of `section`.
  auto each_entry = [&check, &meta](const char* section, auto&& read) {
    const auto* by_pid = check.member(meta, section, Type::object);
    if (by_pid == nullptr) return;
    for (const auto& [pid_text, entries] : by_pid->items()) {
      const std::string at = std::string(section) + "." + pid_text;
      auto pid = check.pid_key(pid_text, at);
      if (!pid) continue;
      if (!entries.is_array()) {
        check.problem(
            at, std::string("expected array, got ") + entries.type_name());
        continue;
      }
      for (size_t i = 0; i < entries.size(); ++i) {
        const std::string path = at + "[" + std::to_string(i) + "]";
        if (!entries[i].is_object()) {
          check.problem(path, std::string("expected object, got ") +
                                  entries[i].type_name());
          continue;
        }
        read(*pid, entries[i], path);
      }
    }
  };
  auto required = [&check](const nlohmann::json& e, const char* key,
                           const std::string& path) -> const nlohmann::json* {
    auto it = e.find(key);
    if (it != e.end()) return &*it;
    check.problem(path + "." + key, "missing");
    return nullptr;
  };
  each_entry("mapped_process_module_symbols", [&](int32_t pid,
                                                  const nlohmann::json& e,
                                                  const std::string& path) {
    const auto* key_value = required(e, "perf_map_key", path);
    const std::string* key =
        key_value ? check.string(*key_value, path + ".perf_map_key") : nullptr;
    std::optional<uint64_t> bias = 0;
    if (auto it = e.find("load_bias"); it != e.end())
      bias = check.u64(*it, path + ".load_bias");
    if (key != nullptr && bias) pids[pid].symbols.push_back({*key, *bias});
  });
  each_entry("mapped_process_unwind_data_by_pid", [&](int32_t pid,
                                                      const nlohmann::json& e,
                                                      const std::string& path) {
    const auto* key_value = required(e, "unwind_data_key", path);
    const std::string* key =
        key_value ? check.string(*key_value, path + ".unwind_data_key")
                  : nullptr;
    const auto* range = required(e, "avma_range", path);
    if (range != nullptr && !range->is_object()) {
      check.problem(path + ".avma_range",
                    std::string("expected object, got ") + range->type_name());
      range = nullptr;
    }
    std::optional<uint64_t> start, end, base = 0;
    if (range != nullptr) {
      if (const auto* v = required(*range, "start", path + ".avma_range"))
        start = check.u64(*v, path + ".avma_range.start");
      if (const auto* v = required(*range, "end", path + ".avma_range"))
        end = check.u64(*v, path + ".avma_range.end");
    }
    if (auto it = e.find("base_avma"); it != e.end())
      base = check.u64(*it, path + ".base_avma");
    if (key != nullptr && start && end && base)
      pids[pid].unwind.push_back({*key, *start, *end, *base});
  });
  for (auto& [pid, modules] : pids) {
    std::sort(modules.unwind.begin(), modules.unwind.end(),
              [](const UnwindRef& a, const UnwindRef& b) {
                return a.start < b.start;
              });
  }
  return pids;
}

// The kind of a marker {"<kind>": timestamp}, or "" when it has another
// shape.
std::string marker_kind(const nlohmann::json& marker, uint64_t* ts) {
  if (!marker.is_object() || marker.size() != 1) return "";
  auto it = marker.begin();
  if (!it.value().is_number_integer()) return "";
  *ts = json_u64(it.value());
  return it.key();
}

}  // namespace

ModuleSymbols::ModuleSymbols(std::vector<symbols::Symbol> symbols) {
  std::stable_sort(symbols.begin(), symbols.end(),
                   [](const symbols::Symbol& a, const symbols::Symbol& b) {
                     return a.addr < b.addr;
                   });
  for (auto& s : symbols) {
    if (s.size == 0) continue;
    // Aliases at one address: .symbols.map lists the one perf would pick
    // first (symbols/ orders them by binding), keep that one.
    if (!symbols_.empty() && symbols_.back().addr == s.addr) continue;
    symbols_.push_back(std::move(s));
  }
  if (!symbols_.empty()) {
    min_ = symbols_.front().addr;
    for (const auto& s : symbols_)
      max_end_ = std::max(max_end_, s.addr + s.size);
  }
}

const symbols::Symbol* ModuleSymbols::find(uint64_t addr) const {
  auto it = std::upper_bound(
      symbols_.begin(), symbols_.end(), addr,
      [](uint64_t a, const symbols::Symbol& s) { return a < s.addr; });
  // Walk back a little: an enclosing symbol may start before a smaller one.
  for (int step = 0; step < 16 && it != symbols_.begin(); ++step) {
    --it;
    if (addr < it->addr + it->size) return &*it;
  }
  return nullptr;
}

base::Result<ProfileFolder> ProfileFolder::open(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return base::Error("not a profile folder: " + folder, ENOENT);
  ProfileFolder pf;
  pf.path_ = folder;

  nlohmann::json meta;
  auto text = base::read_file(folder + "/perf.metadata");
  if (text) {
    // The report needs no per-symbol debug info (the largest part of the
    // file): drop it while parsing instead of building it.
    nlohmann::json::parser_callback_t skip_debug_info =
        [](int depth, nlohmann::json::parse_event_t event,
           nlohmann::json& parsed) {
          return !(depth == 1 && event == nlohmann::json::parse_event_t::key &&
                   (parsed == "debug_info" ||
                    parsed == "mapped_process_debug_info_by_pid"));
        };
    // Cutting the members out before parsing saves lexing them at all; the
    // callback still drops them if the cut did not apply.
    meta = nlohmann::json::parse(
        drop_json_members(*text,
                          {"debug_info", "mapped_process_debug_info_by_pid"}),
        skip_debug_info, false);
    if (meta.is_discarded())
      meta = nlohmann::json::parse(*text, skip_debug_info, false);
    if (meta.is_discarded() || !meta.is_object()) {
      pf.warnings_.push_back("perf.metadata is not valid JSON: ignored");
      meta = nlohmann::json::object();
    } else {
      pf.has_metadata_ = true;
    }
  } else {
    // Missing, or refused (a link, a FIFO, a device, over the size cap).
    pf.warnings_.push_back(
        (text.error().code() == ENOENT ? "no perf.metadata"
                                       : text.error().what()) +
        std::string(": frames cannot be symbolized or unwound"));
    meta = nlohmann::json::object();
  }

  MetadataChecker check("perf.metadata");
  pf.pids_ = read_pid_modules(meta, check);
  if (const auto* key_paths = check.member(meta, "path_key_to_path",
                                           nlohmann::json::value_t::object)) {
    for (const auto& [key, path] : key_paths->items())
      if (const auto* value = check.string(path, "path_key_to_path." + key))
        pf.key_to_path_[key] = *value;
  }
  if (const auto* runner =
          check.member(meta, "runner", nlohmann::json::value_t::object)) {
    const auto* filter =
        check.member(*runner, "pid_filter", nlohmann::json::value_t::string,
                     "runner.pid_filter");
    const auto* tracked =
        check.member(*runner, "tracked_pids", nlohmann::json::value_t::array,
                     "runner.tracked_pids");
    if (filter != nullptr && *filter == "tracked" && tracked != nullptr) {
      pf.filter_pids_ = true;
      for (size_t i = 0; i < tracked->size(); ++i) {
        if (auto pid = check.pid((*tracked)[i], "runner.tracked_pids[" +
                                                    std::to_string(i) + "]"))
          pf.tracked_pids_.insert(*pid);
      }
    }
  }
  check.flush(pf.warnings_);

  // Benchmark windows: ExecutionTimestamps.msgpack, else the copies in the
  // metadata.
  nlohmann::json timestamps;
  MetadataChecker check_timestamps("ExecutionTimestamps.msgpack");
  if (auto bytes = base::read_file(folder + "/ExecutionTimestamps.msgpack")) {
    timestamps = nlohmann::json::from_msgpack(*bytes, true, false);
    if (timestamps.is_discarded()) {
      pf.warnings_.push_back(
          "ExecutionTimestamps.msgpack is corrupt: using "
          "the copy in perf.metadata");
      timestamps = nlohmann::json();
    }
  }
  if (!timestamps.is_object()) {
    check_timestamps = MetadataChecker("perf.metadata");
    timestamps = nlohmann::json::object();
    timestamps["uri_by_ts"] = meta.value("uri_by_ts", nlohmann::json::array());
    timestamps["markers"] = meta.value("markers", nlohmann::json::array());
  }
  std::vector<std::pair<uint64_t, std::string>> uris;
  if (const auto* list = check_timestamps.member(
          timestamps, "uri_by_ts", nlohmann::json::value_t::array)) {
    for (size_t i = 0; i < list->size(); ++i) {
      const auto& e = (*list)[i];
      if (e.is_array() && e.size() == 2 && e[0].is_number_integer() &&
          e[1].is_string())
        uris.push_back({json_u64(e[0]), e[1].get<std::string>()});
      else
        check_timestamps.problem("uri_by_ts[" + std::to_string(i) + "]",
                                 "expected [timestamp, uri]");
    }
  }
  bool open_window = false;
  // A RoundStart waiting for its RoundEnd (has_round_start = false: none).
  uint64_t round_start = 0;
  bool has_round_start = false;
  const auto* markers = check_timestamps.member(timestamps, "markers",
                                                nlohmann::json::value_t::array);
  for (size_t i = 0; markers != nullptr && i < markers->size(); ++i) {
    uint64_t ts = 0;
    std::string kind = marker_kind((*markers)[i], &ts);
    if (kind.empty()) {
      check_timestamps.problem("markers[" + std::to_string(i) + "]",
                               "expected {\"<marker>\": timestamp}");
    } else if (kind == "SampleStart") {
      if (open_window) continue;
      pf.windows_.push_back(Window{ts, UINT64_MAX, "", "", {}});
      open_window = true;
    } else if (kind == "SampleEnd" && open_window) {
      pf.windows_.back().end = ts;
      open_window = false;
    } else if (kind == "RoundStart" || kind == "BenchmarkStart") {
      round_start = ts;
      has_round_start = true;
    } else if ((kind == "RoundEnd" || kind == "BenchmarkEnd") &&
               has_round_start && !pf.windows_.empty()) {
      pf.windows_.back().rounds.push_back({round_start, ts});
      has_round_start = false;
    }
  }
  check_timestamps.flush(pf.warnings_);
  for (size_t i = 0; i < pf.windows_.size(); ++i) {
    Window& w = pf.windows_[i];
    for (const auto& [ts, uri] : uris) {
      if (w.end != UINT64_MAX && ts >= w.end) {
        w.uri = uri;
        break;
      }
    }
    if (w.uri.empty()) {
      w.name = "window " + std::to_string(i + 1) +
               (w.end == UINT64_MAX ? " (never stopped)" : " (no URI)");
    } else {
      w.name = w.uri;
    }
  }
  return pf;
}

const PidModules* ProfileFolder::modules(int32_t pid) const {
  auto it = pids_.find(pid);
  return it == pids_.end() ? nullptr : &it->second;
}

std::string ProfileFolder::key_path(const std::string& key) const {
  auto it = key_to_path_.find(key);
  if (it != key_to_path_.end()) return it->second;
  size_t sep = key.find("__");
  return sep == std::string::npos ? key : key.substr(sep + 2);
}

void ProfileFolder::warn_once(const std::string& key, const std::string& text) {
  if (warned_.insert(key).second) warnings_.push_back(text);
}

const ModuleSymbols* ProfileFolder::symbols(const std::string& key) {
  auto it = symbols_.find(key);
  if (it != symbols_.end()) return it->second.get();
  std::unique_ptr<ModuleSymbols> table;
  auto text = base::read_file(path_ + "/" + key + ".symbols.map");
  if (!text) {
    warn_once(key + ".symbols", key + ".symbols.map: " + text.error().what());
  } else if (auto parsed = format::parse_symbols_map(*text); !parsed) {
    warn_once(key + ".symbols", key + ".symbols.map: " + parsed.error().what());
  } else {
    table = std::make_unique<ModuleSymbols>(std::move(*parsed));
  }
  return (symbols_[key] = std::move(table)).get();
}

UnwindModule* ProfileFolder::unwind(const std::string& key) {
  auto it = unwind_.find(key);
  if (it != unwind_.end()) return it->second.get();
  std::unique_ptr<UnwindModule> module;
  auto region = base::read_file(path_ + "/" + key + ".unwind_data");
  if (!region) {
    warn_once(key + ".unwind", key + ".unwind_data: " + region.error().what());
  } else {
    auto data = format::decode_unwind_data(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(region->data()), region->size()));
    if (!data) {
      warn_once(key + ".unwind", key + ".unwind_data: " + data.error().what());
    } else {
      std::optional<std::vector<uint8_t>> hdr = std::move(data->eh_frame_hdr);
      uint64_t hdr_svma =
          data->eh_frame_hdr_svma ? data->eh_frame_hdr_svma->start : 0;
      auto eh =
          EhFrame::create(std::move(data->eh_frame), data->eh_frame_svma.start,
                          std::move(hdr), hdr_svma);
      if (!eh) {
        warn_once(key + ".unwind", key + ".unwind_data: " + eh.error().what());
      } else {
        module = std::make_unique<UnwindModule>();
        module->eh_frame = std::make_unique<EhFrame>(std::move(*eh));
        module->base_svma = data->base_svma;
      }
    }
  }
  return (unwind_[key] = std::move(module)).get();
}

const std::vector<JitSymbol>* ProfileFolder::perf_map(int32_t pid) {
  auto it = perf_maps_.find(pid);
  if (it != perf_maps_.end()) return it->second.get();
  std::unique_ptr<std::vector<JitSymbol>> map;
  if (auto text =
          base::read_file(path_ + "/perf-" + std::to_string(pid) + ".map")) {
    map =
        std::make_unique<std::vector<JitSymbol>>(format::parse_perf_map(*text));
    std::sort(map->begin(), map->end(),
              [](const JitSymbol& x, const JitSymbol& y) {
                return x.start < y.start;
              });
  }
  return (perf_maps_[pid] = std::move(map)).get();
}

}  // namespace runner::report
