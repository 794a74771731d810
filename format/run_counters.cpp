// runner.counters.json: written and read here only (run_counters.hpp).
#include "format/run_counters.hpp"

#include <nlohmann/json.hpp>

#include "format/json_checker.hpp"

namespace runner::format {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFile = "runner.counters.json";
constexpr const char* kClock = "CLOCK_MONOTONIC";

Json delta_json(const CounterDelta& d) {
  Json j;
  j["value"] = d.value;
  j["enabled_ns"] = d.enabled_ns;
  j["running_ns"] = d.running_ns;
  j["multiplexed"] = d.multiplexed();
  return j;
}

Json window_json(const CounterWindow& w) {
  Json j;
  j["start_ns"] = w.start_ns;
  j["stop_ns"] = w.stop_ns;
  if (w.task_clock) j[kTaskClockCounter] = delta_json(*w.task_clock);
  if (w.instructions) j[kInstructionsCounter] = delta_json(*w.instructions);
  if (w.cycles) j[kCyclesCounter] = delta_json(*w.cycles);
  return j;
}

Json info_json(const CounterInfo& info) {
  Json j;
  j["name"] = info.name;
  j["counted"] = info.counted;
  if (info.counted)
    j["user_only"] = info.user_only;
  else
    j["absent_reason"] = info.absent_reason;
  return j;
}

// The reading side: each accessor returns nullptr / nullopt after noting
// the first problem in `error`, so that a reader stops at the first one.
class Reader {
 public:
  const std::string& error() const { return error_; }
  bool failed() const { return !error_.empty(); }

  const Json* member(const Json& object, std::string_view key,
                     const std::string& path, bool required = true) {
    auto it = object.find(std::string(key));
    if (it == object.end()) {
      if (required) fail("missing '" + path + "'");
      return nullptr;
    }
    return &*it;
  }
  std::optional<uint64_t> u64(const Json& object, std::string_view key,
                              const std::string& path) {
    const Json* v = member(object, key, path);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_unsigned()) {
      fail(path + " is not an integer >= 0");
      return std::nullopt;
    }
    return v->get<uint64_t>();
  }
  std::optional<bool> boolean(const Json& object, std::string_view key,
                              const std::string& path) {
    const Json* v = member(object, key, path);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      fail(path + " is not true or false");
      return std::nullopt;
    }
    return v->get<bool>();
  }
  std::optional<std::string> string(const Json& object, std::string_view key,
                                    const std::string& path) {
    const Json* v = member(object, key, path);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      fail(path + " is not a string");
      return std::nullopt;
    }
    return v->get<std::string>();
  }
  const Json* typed(const Json& object, std::string_view key,
                    const std::string& path, Json::value_t type,
                    const char* what) {
    const Json* v = member(object, key, path);
    if (v != nullptr && v->type() != type) {
      fail(path + " is not " + what);
      return nullptr;
    }
    return v;
  }
  void fail(const std::string& message) {
    if (error_.empty()) error_ = message;
  }

 private:
  std::string error_;
};

std::optional<CounterDelta> read_delta(Reader& r, const Json& window,
                                       std::string_view name,
                                       const std::string& at) {
  const std::string path = at + "." + std::string(name);
  if (r.member(window, name, path, false) == nullptr) return std::nullopt;
  const Json* j =
      r.typed(window, name, path, Json::value_t::object, "an object");
  if (j == nullptr) return std::nullopt;
  CounterDelta d;
  d.value = r.u64(*j, "value", path + ".value").value_or(0);
  d.enabled_ns = r.u64(*j, "enabled_ns", path + ".enabled_ns").value_or(0);
  d.running_ns = r.u64(*j, "running_ns", path + ".running_ns").value_or(0);
  if (!r.failed() && d.running_ns > d.enabled_ns)
    r.fail(path + ": running_ns above enabled_ns");
  return d;
}

void read_windows(Reader& r, const Json& doc, RunCounters& out) {
  const Json* windows =
      r.typed(doc, "windows", "windows", Json::value_t::array, "an array");
  if (windows == nullptr) return;
  for (size_t i = 0; i < windows->size() && !r.failed(); ++i) {
    const std::string at = "windows[" + std::to_string(i) + "]";
    const Json& w = (*windows)[i];
    if (!w.is_object()) {
      r.fail(at + " is not an object");
      return;
    }
    CounterWindow window;
    window.start_ns = r.u64(w, "start_ns", at + ".start_ns").value_or(0);
    window.stop_ns = r.u64(w, "stop_ns", at + ".stop_ns").value_or(0);
    if (!r.failed() && window.stop_ns < window.start_ns)
      r.fail(at + ": stop_ns before start_ns");
    window.task_clock = read_delta(r, w, kTaskClockCounter, at);
    window.instructions = read_delta(r, w, kInstructionsCounter, at);
    window.cycles = read_delta(r, w, kCyclesCounter, at);
    out.windows.push_back(std::move(window));
  }
}

void read_infos(Reader& r, const Json& doc, RunCounters& out) {
  const Json* counters =
      r.typed(doc, "counters", "counters", Json::value_t::array, "an array");
  if (counters == nullptr) return;
  for (size_t i = 0; i < counters->size() && !r.failed(); ++i) {
    const std::string at = "counters[" + std::to_string(i) + "]";
    const Json& c = (*counters)[i];
    if (!c.is_object()) {
      r.fail(at + " is not an object");
      return;
    }
    CounterInfo info;
    info.name = r.string(c, "name", at + ".name").value_or("");
    info.counted = r.boolean(c, "counted", at + ".counted").value_or(false);
    if (info.counted)
      info.user_only =
          r.boolean(c, "user_only", at + ".user_only").value_or(false);
    else
      info.absent_reason =
          r.string(c, "absent_reason", at + ".absent_reason").value_or("");
    out.counters.push_back(std::move(info));
  }
}

RunCounters read_document(Reader& r, const Json& doc) {
  RunCounters out;
  if (!doc.is_object()) {
    r.fail("not a JSON object");
    return out;
  }
  const auto version = r.u64(doc, "version", "version");
  if (!version) return out;
  if (*version < 1 || *version > kRunCountersVersion) {
    r.fail("version " + std::to_string(*version) +
           " is not supported (this runner reads " +
           std::to_string(kRunCountersVersion) + ")");
    return out;
  }
  out.version = static_cast<int>(*version);
  const auto clock = r.string(doc, "clock", "clock");
  if (clock && *clock != kClock)
    r.fail("clock '" + *clock + "' is not " + kClock);
  read_infos(r, doc, out);
  read_windows(r, doc, out);
  out.lost_windows = r.u64(doc, "lost_windows", "lost_windows").value_or(0);
  out.lost_reason = r.string(doc, "lost_reason", "lost_reason").value_or("");
  return out;
}

}  // namespace

std::string write_run_counters(const RunCounters& counters) {
  Json j;
  j["version"] = counters.version;
  j["clock"] = kClock;
  j["counters"] = Json::array();
  for (const auto& info : counters.counters)
    j["counters"].push_back(info_json(info));
  j["windows"] = Json::array();
  for (const auto& w : counters.windows) j["windows"].push_back(window_json(w));
  j["lost_windows"] = counters.lost_windows;
  j["lost_reason"] = counters.lost_reason;
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

base::Result<RunCounters> read_run_counters(std::string_view text) {
  const std::string prefix = std::string(kFile) + ": ";
  if (text.size() > kMaxRunCountersBytes)
    return base::Error(
        prefix + std::to_string(text.size()) + " bytes is over the " +
        std::to_string(kMaxRunCountersBytes >> 20) + " MiB limit");
  auto doc = parse_json_document<Json>(text);
  if (!doc) return base::Error(prefix + doc.error().what());
  Reader reader;
  RunCounters out = read_document(reader, *doc);
  if (reader.failed()) return base::Error(prefix + reader.error());
  return out;
}

}  // namespace runner::format
