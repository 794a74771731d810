#include "format/perf_metadata.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <initializer_list>

#include <nlohmann/json.hpp>

#include "format/json_checker.hpp"
#include "format/profile_layout.hpp"
#include "format/timestamps_json.hpp"

namespace runner::format {
namespace {

// ---- writing ----------------------------------------------------------------

using Json = nlohmann::ordered_json;  // keeps the documented member order

Json uri_by_ts_json(const ExecutionTimestamps& timestamps) {
  Json out = Json::array();
  for (const auto& [ts, uri] : timestamps.uri_by_ts)
    out.push_back(Json::array({ts, uri}));
  return out;
}

Json markers_json(const ExecutionTimestamps& timestamps) {
  Json out = Json::array();
  for (const Marker& m : timestamps.markers) {
    Json entry = Json::object();
    entry[m.kind] = m.timestamp;
    out.push_back(std::move(entry));
  }
  return out;
}

// {"<pid>": [entry, ...]} without the pids whose list is empty.
template <typename T, typename ToJson>
Json by_pid_json(const ByPid<T>& by_pid, ToJson&& to_json) {
  Json out = Json::object();
  for (const auto& [pid, entries] : by_pid) {
    if (entries.empty()) continue;
    Json list = Json::array();
    for (const T& e : entries) list.push_back(to_json(e));
    out[std::to_string(pid)] = std::move(list);
  }
  return out;
}

Json symbols_ref_json(const SymbolsRef& e) {
  return Json{{"perf_map_key", e.key}, {"load_bias", e.load_bias}};
}

Json debug_info_ref_json(const DebugInfoRef& e) {
  return Json{{"debug_info_key", e.key}, {"load_bias", e.load_bias}};
}

Json unwind_ref_json(const UnwindRef& e) {
  Json entry = Json::object();
  entry["unwind_data_key"] = e.key;
  entry["timestamp"] = e.timestamp ? Json(*e.timestamp) : Json(nullptr);
  entry["avma_range"] = {{"start", e.start}, {"end", e.end}};
  entry["base_avma"] = e.base_avma;
  return entry;
}

Json ignored_module_json(const IgnoredModule& e) {
  return Json::array({e.path, e.start, e.end});
}

// `s` as a JSON string, as Json::dump(-1, ' ', false, replace) writes it:
// plain printable ASCII directly, anything else through nlohmann (escapes,
// invalid UTF-8 replaced by U+FFFD).
void append_json_string(std::string& out, const std::string& s) {
  bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!plain) {
    out += Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

void append_number(std::string& out, uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

// The debug_info member's value, written directly: it is most of the
// document (a DOM of one object per symbol costs more than the rest of
// finalize on a warm cache). Same bytes as the DOM's dump.
std::string debug_info_text(
    const std::map<std::string, ModuleDebugInfo>& modules) {
  std::string out = "{";
  for (const auto& [key, info] : modules) {
    if (out.size() > 1) out += ',';
    append_json_string(out, key);
    out += ":{\"object_path\":";
    append_json_string(out, info.object_path);
    out += ",\"addr_bounds\":[";
    append_number(out, info.addr_min);
    out += ',';
    append_number(out, info.addr_max);
    out += "],\"load_bias\":0,\"debug_infos\":[";
    for (size_t i = 0; i < info.entries.size(); ++i) {
      const DebugInfoEntry& d = info.entries[i];
      out += i == 0 ? "{\"addr\":" : ",{\"addr\":";
      append_number(out, d.addr);
      out += ",\"size\":";
      append_number(out, d.size);
      out += ",\"name\":";
      append_json_string(out, d.name);
      out += ",\"file\":";
      append_json_string(out, d.file);
      out += ",\"line\":";
      if (d.line) {
        append_number(out, *d.line);
      } else {
        out += "null";
      }
      out += '}';
    }
    out += "]}";
  }
  return out + "}";
}

// The members of an object's dump, without its braces.
std::string_view members(const std::string& object_text) {
  return std::string_view(object_text).substr(1, object_text.size() - 2);
}

// The counters of the runner section, in the order they are written.
constexpr std::pair<const char*, uint64_t SamplerSection::*> kSamplerCounts[] =
    {{"mmap_size_per_cpu", &SamplerSection::mmap_size_per_cpu},
     {"samples", &SamplerSection::samples},
     {"lost_records", &SamplerSection::lost_records},
     {"lost_samples", &SamplerSection::lost_samples},
     {"bytes_written", &SamplerSection::bytes_written},
     {"drain_passes", &SamplerSection::drain_passes},
     {"window_drain_passes", &SamplerSection::window_drain_passes},
     {"drain_cpu_us", &SamplerSection::drain_cpu_us},
     {"stacks_blanked", &SamplerSection::stacks_blanked},
     {"stack_bytes_blanked", &SamplerSection::stack_bytes_blanked},
     {"stacks_dropped", &SamplerSection::stacks_dropped},
     {"samples_dropped", &SamplerSection::samples_dropped},
     {"stack_bytes_copied", &SamplerSection::stack_bytes_copied},
     {"stack_bytes_written", &SamplerSection::stack_bytes_written},
     {"drain_threads", &SamplerSection::drain_threads}};
constexpr std::pair<const char*, uint64_t FifoCounters::*> kFifoCounts[] = {
    {"commands", &FifoCounters::commands},
    {"malformed_frames", &FifoCounters::malformed_frames},
    {"oversized_frames", &FifoCounters::oversized_frames},
    {"unexpected_commands", &FifoCounters::unexpected_commands},
    {"rejected_versions", &FifoCounters::rejected_versions},
    {"duplicate_starts", &FifoCounters::duplicate_starts},
    {"unmatched_stops", &FifoCounters::unmatched_stops},
    {"dropped_replies", &FifoCounters::dropped_replies},
    {"write_errors", &FifoCounters::write_errors},
    {"resyncs", &FifoCounters::resyncs},
    {"discarded_bytes", &FifoCounters::discarded_bytes},
    {"truncated_frames", &FifoCounters::truncated_frames},
    {"stale_reply_bytes", &FifoCounters::stale_reply_bytes}};

void write_sampler(const SamplerSection& s, Json& runner) {
  runner["event"] = s.event;
  runner["frequency"] = s.frequency;
  runner["call_graph"] = s.call_graph;
  runner["stack_size"] = s.stack_size;
  runner["tracking_event"] = s.tracking_event;
  for (const auto& [name, member] : kSamplerCounts) runner[name] = s.*member;
  runner["write_error"] = s.write_error ? Json(*s.write_error) : Json(nullptr);
  runner["ring_buffers_bytes"] = s.ring_buffers_bytes;
  Json cpus = Json::array();
  for (const SamplerCpu& cpu : s.per_cpu)
    cpus.push_back({{"cpu", cpu.cpu},
                    {"samples", cpu.samples},
                    {"lost_samples", cpu.lost_samples}});
  runner["per_cpu"] = std::move(cpus);
}

Json fifo_json(const FifoCounters& c) {
  Json out = Json::object();
  for (const auto& [name, member] : kFifoCounts) out[name] = c.*member;
  return out;
}

Json counts_json(const std::map<std::string, uint64_t>& counts) {
  Json out = Json::object();
  for (const auto& [reason, count] : counts) out[reason] = count;
  return out;
}

Json runner_json(const RunnerSection& r) {
  Json runner = Json::object();
  runner["version"] = r.version;
  runner["profiled"] = r.profiled;
  if (r.sampler) write_sampler(*r.sampler, runner);
  if (r.max_rss_kib) runner["max_rss_kib"] = *r.max_rss_kib;
  runner["pid_filter"] = r.pid_filter;
  runner["announced_pids"] = r.announced_pids;
  if (r.tracked_pids) runner["tracked_pids"] = *r.tracked_pids;
  runner["skipped_mappings"] = counts_json(r.skipped_mappings);
  runner["backfilled_mappings"] = r.backfilled_mappings;
  runner["unsampled_pids_forgotten"] = r.unsampled_pids_forgotten;
  runner["module_errors"] = counts_json(r.module_errors);
  runner["artifacts_not_written"] = r.artifacts_not_written;
  runner["fifo"] = fifo_json(r.fifo);
  return runner;
}

// ---- reading ----------------------------------------------------------------

using Type = nlohmann::json::value_t;

constexpr std::string_view kJsonSpace = " \t\r\n";
constexpr const char* kDebugInfo = "debug_info";
constexpr const char* kDebugInfoByPid = "mapped_process_debug_info_by_pid";

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

// The document, without the debug-info members unless asked for. Bytes that
// are not UTF-8 read as U+FFFD.
base::Result<nlohmann::json> parse_document(std::string_view text,
                                            bool debug_info) {
  constexpr bool kReplace = true;
  if (debug_info) return parse_json_document<nlohmann::json>(text, kReplace);
  // The report needs no per-symbol debug info (the largest part of the
  // file): drop it while parsing instead of building it.
  nlohmann::json::parser_callback_t skip_debug_info =
      [](int depth, nlohmann::json::parse_event_t event,
         nlohmann::json& parsed) {
        return !(depth == 1 && event == nlohmann::json::parse_event_t::key &&
                 (parsed == kDebugInfo || parsed == kDebugInfoByPid));
      };
  // Cutting the members out before parsing saves lexing them at all; the
  // callback still drops them if the cut did not apply.
  auto meta = parse_json_document<nlohmann::json>(
      drop_json_members(text, {kDebugInfo, kDebugInfoByPid}), kReplace,
      skip_debug_info);
  if (!meta)
    meta = parse_json_document<nlohmann::json>(text, kReplace, skip_debug_info);
  return meta;
}

// Silent readers of the members nobody but tests and bench/ look at: a value
// of another type reads as the default.
uint64_t lenient_u64(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() ? json_u64(*it) : 0;
}

std::string lenient_string(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

bool lenient_bool(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::optional<int32_t> lenient_pid(const nlohmann::json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  const bool in_range =
      v.is_number_unsigned()
          ? v.get<uint64_t>() <= INT32_MAX
          : v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX;
  if (!in_range) return std::nullopt;
  return static_cast<int32_t>(json_u64(v));
}

std::map<std::string, uint64_t> lenient_counts(const nlohmann::json& object,
                                               const char* key) {
  std::map<std::string, uint64_t> out;
  auto it = object.find(key);
  if (it == object.end() || !it->is_object()) return out;
  for (const auto& [name, count] : it->items())
    if (count.is_number_integer()) out[name] = json_u64(count);
  return out;
}

// Calls read(pid, entry, path) for each object entry of each pid of
// `section` ({"<pid>": [entry, ...]}); malformed ones are noted.
template <typename Read>
void each_pid_entry(const nlohmann::json& meta, const char* section,
                    JsonChecker& check, Read&& read) {
  const auto* by_pid = check.member(meta, section, Type::object);
  if (by_pid == nullptr) return;
  for (const auto& [pid_text, entries] : by_pid->items()) {
    const std::string at = std::string(section) + "." + pid_text;
    auto pid = check.pid_key(pid_text, at);
    if (!pid) continue;
    if (!entries.is_array()) {
      check.problem(at,
                    std::string("expected array, got ") + entries.type_name());
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
}

ByPid<SymbolsRef> read_symbols_refs(const nlohmann::json& meta,
                                    JsonChecker& check) {
  ByPid<SymbolsRef> out;
  each_pid_entry(
      meta, "mapped_process_module_symbols", check,
      [&](int32_t pid, const nlohmann::json& e, const std::string& path) {
        const auto* key_value = check.required(e, "perf_map_key", path);
        const std::string* key =
            key_value ? check.string(*key_value, path + ".perf_map_key")
                      : nullptr;
        std::optional<uint64_t> bias = 0;
        if (auto it = e.find("load_bias"); it != e.end())
          bias = check.u64(*it, path + ".load_bias");
        if (key != nullptr && bias) out[pid].push_back({*key, *bias});
      });
  return out;
}

// One mapped_process_unwind_data_by_pid entry, or nullopt (noted).
std::optional<UnwindRef> read_unwind_ref(const nlohmann::json& e,
                                         const std::string& path,
                                         JsonChecker& check) {
  const auto* key_value = check.required(e, "unwind_data_key", path);
  const std::string* key =
      key_value ? check.string(*key_value, path + ".unwind_data_key") : nullptr;
  const auto* range = check.required(e, "avma_range", path);
  if (range != nullptr && !range->is_object()) {
    check.problem(path + ".avma_range",
                  std::string("expected object, got ") + range->type_name());
    range = nullptr;
  }
  std::optional<uint64_t> start, end, base = 0;
  if (range != nullptr) {
    if (const auto* v = check.required(*range, "start", path + ".avma_range"))
      start = check.u64(*v, path + ".avma_range.start");
    if (const auto* v = check.required(*range, "end", path + ".avma_range"))
      end = check.u64(*v, path + ".avma_range.end");
  }
  if (auto it = e.find("base_avma"); it != e.end())
    base = check.u64(*it, path + ".base_avma");
  if (key == nullptr || !start || !end || !base) return std::nullopt;
  UnwindRef ref{*key, std::nullopt, *start, *end, *base};
  if (auto it = e.find("timestamp"); it != e.end() && it->is_number_integer())
    ref.timestamp = json_u64(*it);
  return ref;
}

ByPid<UnwindRef> read_unwind_refs(const nlohmann::json& meta,
                                  JsonChecker& check) {
  ByPid<UnwindRef> out;
  each_pid_entry(
      meta, "mapped_process_unwind_data_by_pid", check,
      [&](int32_t pid, const nlohmann::json& e, const std::string& path) {
        if (auto ref = read_unwind_ref(e, path, check))
          out[pid].push_back(std::move(*ref));
      });
  return out;
}

// The <index> of a module key "<index>__<name>" (UINT64_MAX: none).
uint64_t key_index(std::string_view key) {
  uint64_t index = 0;
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
  if (ec != std::errc() ||
      !std::string_view(end, key.data() + key.size() - end).starts_with("__"))
    return UINT64_MAX;
  return index;
}

std::vector<std::pair<std::string, std::string>> read_key_paths(
    const nlohmann::json& meta, JsonChecker& check) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto* key_paths = check.member(meta, "path_key_to_path", Type::object);
  if (key_paths == nullptr) return out;
  for (const auto& [key, path] : key_paths->items())
    if (const auto* value = check.string(path, "path_key_to_path." + key))
      out.emplace_back(key, *value);
  // Back into the written order (the parser sorts keys as strings).
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return key_index(a.first) < key_index(b.first);
  });
  return out;
}

std::optional<SamplerSection> read_sampler(const nlohmann::json& r) {
  if (!r.contains("event")) return std::nullopt;
  SamplerSection s;
  s.event = lenient_string(r, "event");
  s.frequency = static_cast<uint32_t>(lenient_u64(r, "frequency"));
  s.call_graph = lenient_string(r, "call_graph");
  s.stack_size = static_cast<uint32_t>(lenient_u64(r, "stack_size"));
  s.tracking_event = lenient_bool(r, "tracking_event");
  for (const auto& [name, member] : kSamplerCounts)
    s.*member = lenient_u64(r, name);
  if (auto it = r.find("write_error"); it != r.end() && it->is_string())
    s.write_error = it->get<std::string>();
  s.ring_buffers_bytes = lenient_u64(r, "ring_buffers_bytes");
  if (auto it = r.find("per_cpu"); it != r.end() && it->is_array()) {
    for (const auto& cpu : *it) {
      if (!cpu.is_object()) continue;
      s.per_cpu.push_back({static_cast<uint32_t>(lenient_u64(cpu, "cpu")),
                           lenient_u64(cpu, "samples"),
                           lenient_u64(cpu, "lost_samples")});
    }
  }
  return s;
}

FifoCounters read_fifo(const nlohmann::json& r) {
  FifoCounters c;
  auto it = r.find("fifo");
  if (it == r.end()) return c;
  for (const auto& [name, member] : kFifoCounts)
    c.*member = lenient_u64(*it, name);
  return c;
}

// pid_filter and tracked_pids decide which processes the report shows:
// checked (each pid only when the filter applies); the rest is read
// silently.
RunnerSection read_runner(const nlohmann::json& meta, JsonChecker& check) {
  RunnerSection out;
  const auto* r = check.member(meta, "runner", Type::object);
  if (r == nullptr) return out;
  const auto* filter =
      check.member(*r, "pid_filter", Type::string, "runner.pid_filter");
  const auto* tracked =
      check.member(*r, "tracked_pids", Type::array, "runner.tracked_pids");
  if (filter != nullptr) out.pid_filter = filter->get<std::string>();
  if (tracked != nullptr) {
    const bool checked = out.pid_filter == "tracked";
    out.tracked_pids.emplace();
    for (size_t i = 0; i < tracked->size(); ++i) {
      auto pid = checked ? check.pid((*tracked)[i], "runner.tracked_pids[" +
                                                        std::to_string(i) + "]")
                         : lenient_pid((*tracked)[i]);
      if (pid) out.tracked_pids->push_back(*pid);
    }
  }
  out.version = lenient_string(*r, "version");
  out.profiled = lenient_bool(*r, "profiled");
  out.sampler = read_sampler(*r);
  if (auto it = r->find("max_rss_kib"); it != r->end())
    out.max_rss_kib = json_u64(*it);
  if (auto it = r->find("announced_pids"); it != r->end() && it->is_array())
    for (const auto& v : *it)
      if (auto pid = lenient_pid(v)) out.announced_pids.push_back(*pid);
  out.skipped_mappings = lenient_counts(*r, "skipped_mappings");
  out.backfilled_mappings = lenient_u64(*r, "backfilled_mappings");
  out.unsampled_pids_forgotten = lenient_u64(*r, "unsampled_pids_forgotten");
  out.module_errors = lenient_counts(*r, "module_errors");
  out.artifacts_not_written = lenient_u64(*r, "artifacts_not_written");
  out.fifo = read_fifo(*r);
  return out;
}

// {"<pid>": [...]} read silently: entries read(entry) rejects are skipped.
template <typename T, typename Read>
ByPid<T> lenient_by_pid(const nlohmann::json& meta, const char* section,
                        Read&& read) {
  ByPid<T> out;
  auto it = meta.find(section);
  if (it == meta.end() || !it->is_object()) return out;
  for (const auto& [pid_text, entries] : it->items()) {
    JsonChecker quiet(section);
    auto pid = quiet.pid_key(pid_text, section);
    if (!pid || !entries.is_array()) continue;
    for (const auto& e : entries)
      if (std::optional<T> value = read(e))
        out[*pid].push_back(std::move(*value));
  }
  return out;
}

std::optional<IgnoredModule> read_ignored_module(const nlohmann::json& e) {
  if (!e.is_array() || e.size() != 3 || !e[0].is_string() ||
      !e[1].is_number_integer() || !e[2].is_number_integer())
    return std::nullopt;
  return IgnoredModule{e[0].get<std::string>(), json_u64(e[1]), json_u64(e[2])};
}

std::optional<DebugInfoRef> read_debug_info_ref(const nlohmann::json& e) {
  if (!e.is_object()) return std::nullopt;
  auto key = e.find("debug_info_key");
  if (key == e.end() || !key->is_string()) return std::nullopt;
  return DebugInfoRef{key->get<std::string>(), lenient_u64(e, "load_bias")};
}

std::map<std::string, ModuleDebugInfo> read_debug_info(
    const nlohmann::json& meta) {
  std::map<std::string, ModuleDebugInfo> out;
  auto it = meta.find(kDebugInfo);
  if (it == meta.end() || !it->is_object()) return out;
  for (const auto& [key, m] : it->items()) {
    if (!m.is_object()) continue;
    ModuleDebugInfo info;
    info.object_path = lenient_string(m, "object_path");
    if (auto b = m.find("addr_bounds");
        b != m.end() && b->is_array() && b->size() == 2) {
      info.addr_min = json_u64((*b)[0]);
      info.addr_max = json_u64((*b)[1]);
    }
    auto entries = m.find("debug_infos");
    for (size_t i = 0;
         entries != m.end() && entries->is_array() && i < entries->size();
         ++i) {
      const nlohmann::json& d = (*entries)[i];
      if (!d.is_object()) continue;
      DebugInfoEntry entry{lenient_u64(d, "addr"), lenient_u64(d, "size"),
                           lenient_string(d, "name"), lenient_string(d, "file"),
                           std::nullopt};
      if (auto line = d.find("line"); line != d.end() && line->is_number())
        entry.line = static_cast<uint32_t>(json_u64(*line));
      info.entries.push_back(std::move(entry));
    }
    out[key] = std::move(info);
  }
  return out;
}

void read_integration(const nlohmann::json& meta, PerfMetadata& out) {
  auto it = meta.find("integration");
  if (it == meta.end() || !it->is_array() || it->size() != 2) return;
  if ((*it)[0].is_string()) out.integration_name = (*it)[0].get<std::string>();
  if ((*it)[1].is_string())
    out.integration_version = (*it)[1].get<std::string>();
}

// The members nobody checks: version, integration, ignored modules, debug
// info.
void read_unchecked(const nlohmann::json& meta, PerfMetadata& out) {
  out.version = static_cast<uint32_t>(lenient_u64(meta, "version"));
  read_integration(meta, out);
  out.ignored_modules_by_pid = lenient_by_pid<IgnoredModule>(
      meta, "ignored_modules_by_pid", read_ignored_module);
  out.debug_info = read_debug_info(meta);
  out.mapped_process_debug_info_by_pid =
      lenient_by_pid<DebugInfoRef>(meta, kDebugInfoByPid, read_debug_info_ref);
}

}  // namespace

std::string write_perf_metadata(const PerfMetadata& m) {
  // Member order: version, integration, ignored_modules_by_pid, debug_info
  // (written directly), then the rest.
  Json head = Json::object();
  head["version"] = m.version;
  head["integration"] =
      Json::array({m.integration_name, m.integration_version});
  Json ignored = by_pid_json(m.ignored_modules_by_pid, ignored_module_json);
  if (!ignored.empty()) head["ignored_modules_by_pid"] = std::move(ignored);
  Json meta = Json::object();
  Json debug_refs =
      by_pid_json(m.mapped_process_debug_info_by_pid, debug_info_ref_json);
  if (!debug_refs.empty()) meta[kDebugInfoByPid] = std::move(debug_refs);
  meta["mapped_process_unwind_data_by_pid"] =
      by_pid_json(m.mapped_process_unwind_data_by_pid, unwind_ref_json);
  meta["mapped_process_module_symbols"] =
      by_pid_json(m.mapped_process_module_symbols, symbols_ref_json);
  Json path_keys = Json::object();
  for (const auto& [key, path] : m.path_key_to_path) path_keys[key] = path;
  meta["path_key_to_path"] = std::move(path_keys);
  meta["uri_by_ts"] = uri_by_ts_json(m.timestamps);
  meta["ignored_modules"] = Json::array();
  meta["markers"] = markers_json(m.timestamps);
  meta["runner"] = runner_json(m.runner);
  auto dump = [](const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  std::string out = "{";
  out += members(dump(head));
  if (!m.debug_info.empty()) {
    out += ",\"debug_info\":";
    out += debug_info_text(m.debug_info);
  }
  out += ',';
  out += members(dump(meta));
  return out + "}";
}

base::Result<PerfMetadataRead> read_perf_metadata(
    std::string_view text, PerfMetadataReadOptions options) {
  const std::string file(ProfileLayout::kMetadata);
  auto parsed = parse_document(text, options.debug_info);
  if (!parsed)
    return base::Error(file +
                       " is not valid JSON: " + parsed.error().message());
  const nlohmann::json& meta = *parsed;
  if (!meta.is_object()) return base::Error(file + " is not a JSON object");
  PerfMetadataRead out;
  JsonChecker check(file);
  out.metadata.mapped_process_module_symbols = read_symbols_refs(meta, check);
  out.metadata.mapped_process_unwind_data_by_pid =
      read_unwind_refs(meta, check);
  out.metadata.path_key_to_path = read_key_paths(meta, check);
  out.metadata.runner = read_runner(meta, check);
  out.warnings = check.take_warnings();
  read_unchecked(meta, out.metadata);
  JsonChecker check_timestamps(file);
  out.metadata.timestamps = timestamps_from_json(meta, check_timestamps);
  out.timestamps_warnings = check_timestamps.take_warnings();
  return out;
}

}  // namespace runner::format
