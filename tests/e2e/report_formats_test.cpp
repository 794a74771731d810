// The report's outputs as other tools read them, on the real `runner report`
// over every folder of the golden corpus (tests/golden/folders/):
//   - `--format speedscope` validates against speedscope's published
//     file-format schema (tests/golden/speedscope/, python3-jsonschema), and
//     the validation rejects broken documents;
//   - `--format perf-script` parses under the rules of speedscope's and
//     Firefox Profiler's perf-script importers, restated below from their
//     sources (speedscope src/import/linux-tools-perf.ts, Firefox Profiler
//     src/profile-logic/import/linux-perf.ts), and gives back the comm, pid,
//     tid and frames our own parser (e2e_support) reads.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/e2e/e2e_support.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
namespace rt = runner::testing;

namespace {

std::string env_path(const char* name) {
  const char* value = std::getenv(name);
  REQUIRE_MESSAGE(value != nullptr, name << " is not set (run through meson)");
  return value;
}

std::vector<fs::path> golden_folders() {
  std::vector<fs::path> folders;
  for (const auto& entry :
       fs::directory_iterator(fs::path(env_path("GOLDEN_DIR")) / "folders"))
    if (entry.is_directory()) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  return folders;
}

// `runner report ARGS profile` on a copy of `folder` named `profile` in
// `work`.
rt::ProcessResult report(const fs::path& folder, const std::string& work,
                         const std::vector<std::string>& args) {
  const fs::path copy = fs::path(work) / "profile";
  fs::remove_all(copy);
  fs::copy(folder, copy, fs::copy_options::recursive);
  std::vector<std::string> argv = {rt::binary("RUNNER_BIN"), "report"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(copy.string());
  return rt::run_process(argv);
}

// validate.py SCHEMA FILES...: 0 valid, 1 invalid, 3 no python3-jsonschema.
rt::ProcessResult validate(const std::vector<std::string>& files) {
  const fs::path dir = fs::path(env_path("GOLDEN_DIR")) / "speedscope";
  std::vector<std::string> argv = {"python3", (dir / "validate.py").string(),
                                   (dir / "file-format-schema.json").string()};
  argv.insert(argv.end(), files.begin(), files.end());
  return rt::run_process(argv);
}

void write_json(const std::string& path, const nlohmann::json& doc) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << doc.dump();
  REQUIRE_MESSAGE(out.good(), "cannot write " << path);
}

// ---- the importers' rules (restated, not their code) -----------------------

struct Imported {
  std::string command;
  long pid = -1, tid = -1;
  size_t frames = 0;
};

std::vector<std::vector<std::string>> events_of(const std::string& text) {
  std::vector<std::vector<std::string>> events(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (!events.back().empty()) events.emplace_back();
    } else {
      events.back().push_back(line);
    }
  }
  if (events.back().empty()) events.pop_back();
  return events;
}

// speedscope: a header of at least two characters of command starting with
// a non-space, then tid or pid/tid; a "<seconds>.<fraction>:" time (an
// event without one is dropped); frames "<hex> <name> (<file without
// spaces>)", other lines skipped.
std::optional<Imported> speedscope_rules(const std::vector<std::string>& ev) {
  static const std::regex kStart(R"(^(\S.+?)\s+(\d+)(?:\/?(\d+))?\s+)");
  static const std::regex kTime(R"(\s+(\d+\.\d+):\s+)");
  static const std::regex kFrame(R"(^\s*(\w+)\s*(.+) \((\S*)\))");
  std::smatch m;
  if (ev.empty() || !std::regex_search(ev[0], m, kStart)) return std::nullopt;
  Imported out;
  out.command = m[1];
  if (m[3].matched) {
    out.pid = std::stol(m[2]);
    out.tid = std::stol(m[3]);
  } else {
    out.tid = std::stol(m[2]);
  }
  if (!std::regex_search(ev[0], kTime)) return std::nullopt;
  for (size_t i = 1; i < ev.size(); ++i)
    out.frames += std::regex_search(ev[i], kFrame);
  return out;
}

// Firefox Profiler: the file is recognised by its first line (a non-space
// first, then [pid/]tid, an optional [cpu], a time and ':'); a header is
// "<name> [pid/]tid ... <time>:" with the name trimmed; frames "<hex>
// <name> (<file without ')'>)", other lines skipped.
bool firefox_recognises(const std::string& first_line) {
  static const std::regex kDetect(
      R"(^\S.*?\s+(?:\d+\/)?\d+\s+(?:\[\d+\]\s+)?[\d.]+:)");
  return std::regex_search(first_line, kDetect);
}

std::optional<Imported> firefox_rules(const std::vector<std::string>& ev) {
  static const std::regex kStart(R"(^(.*)\s+([\d.]+):)");
  static const std::regex kThread(R"(^(.*)\s+(?:(\d+)\/)?(\d+)\b)");
  static const std::regex kFrame(R"(^\s*(\w+)\s*(.+) \(([^)]*)\))");
  std::smatch start, thread;
  if (ev.empty() || !std::regex_search(ev[0], start, kStart)) return {};
  const std::string before = start[1];
  if (!std::regex_search(before, thread, kThread)) return std::nullopt;
  Imported out;
  out.command = thread[1];
  out.command.erase(0, out.command.find_first_not_of(" \t"));
  out.command.erase(out.command.find_last_not_of(" \t") + 1);
  out.pid = thread[2].matched ? std::stol(thread[2]) : 0;
  out.tid = std::stol(thread[3]);
  for (size_t i = 1; i < ev.size(); ++i)
    out.frames += std::regex_search(ev[i], kFrame);
  return out;
}

// Every event of `text` imports under both rule sets with the comm, pid,
// tid and frame count that parse_perf_script reads.
void check_importable(const std::string& text, const std::string& what) {
  const auto events = events_of(text);
  const auto ours = rt::parse_perf_script(text);
  REQUIRE_MESSAGE(events.size() == ours.size(), what);
  REQUIRE_MESSAGE(!events.empty(), what);
  CHECK_MESSAGE(firefox_recognises(events[0][0]), what << ": " << events[0][0]);
  for (size_t i = 0; i < events.size(); ++i) {
    const auto s = speedscope_rules(events[i]);
    const auto f = firefox_rules(events[i]);
    CAPTURE(events[i][0]);
    REQUIRE_MESSAGE(s.has_value(), what << ": speedscope drops the event");
    REQUIRE_MESSAGE(f.has_value(), what << ": Firefox drops the event");
    CHECK(s->command == ours[i].comm);
    CHECK(f->command == ours[i].comm);
    CHECK(s->pid == ours[i].pid);
    CHECK(f->pid == ours[i].pid);
    CHECK(s->tid == ours[i].tid);
    CHECK(f->tid == ours[i].tid);
    CHECK(s->frames == ours[i].frames.size());
    CHECK(f->frames == ours[i].frames.size());
  }
}

}  // namespace

TEST_CASE(
    "speedscope output of every golden folder validates against "
    "speedscope's published schema") {
  rt::TempDir work;
  std::vector<std::string> files;
  for (const fs::path& folder : golden_folders()) {
    CAPTURE(folder.filename().string());
    const rt::ProcessResult summary = report(folder, work.path(), {});
    const auto names = rt::read_json_file(
        work.file("profile/report/summary.json"))["benchmarks"];
    const rt::ProcessResult r =
        report(folder, work.path(), {"--format", "speedscope"});
    CHECK(r.exit_code == summary.exit_code);
    const std::string doc_path =
        work.file("copy-" + folder.filename().string() + ".speedscope.json");
    fs::copy_file(work.file("profile/report/profile.speedscope.json"),
                  doc_path);
    files.push_back(doc_path);
    // One profile per benchmark, weighted by its samples.
    const auto doc = rt::read_json_file(doc_path);
    CHECK(doc["$schema"] ==
          "https://www.speedscope.app/file-format-schema.json");
    REQUIRE(doc["profiles"].size() == names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      CHECK(doc["profiles"][i]["name"] == names[i]["name"]);
      uint64_t weight = 0;
      for (const auto& w : doc["profiles"][i]["weights"])
        weight += w.get<uint64_t>();
      CHECK(weight == names[i]["samples"].get<uint64_t>());
    }
  }
  REQUIRE(files.size() >= 5);
  const rt::ProcessResult v = validate(files);
  if (v.exit_code == 3) RUNNER_SKIP_CASE(v.err);
  CHECK_MESSAGE(v.exit_code == 0, v.err);
}

TEST_CASE("the speedscope validation rejects broken documents") {
  rt::TempDir work;
  const fs::path example =
      fs::path(env_path("GOLDEN_DIR")) / "folders" / "example";
  REQUIRE(report(example, work.path(), {"--format", "speedscope"}).exit_code ==
          0);
  const auto good =
      rt::read_json_file(work.file("profile/report/profile.speedscope.json"));
  REQUIRE(good["profiles"].size() > 0);
  REQUIRE(good["profiles"][0]["samples"].size() > 0);
  const rt::ProcessResult ok =
      validate({work.file("profile/report/"
                          "profile.speedscope.json")});
  if (ok.exit_code == 3) RUNNER_SKIP_CASE(ok.err);
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);

  struct Breakage {
    const char* what;
    void (*apply)(nlohmann::json&);
  };
  const Breakage breakages[] = {
      {"no shared frames", [](nlohmann::json& d) { d.erase("shared"); }},
      {"another $schema",
       [](nlohmann::json& d) { d["$schema"] = "https://example.com/s.json"; }},
      {"unknown profile type",
       [](nlohmann::json& d) { d["profiles"][0]["type"] = "sampling"; }},
      {"a profile without weights",
       [](nlohmann::json& d) { d["profiles"][0].erase("weights"); }},
      {"a frame index as a string",
       [](nlohmann::json& d) { d["profiles"][0]["samples"][0][0] = "0"; }},
      {"a frame without a name",
       [](nlohmann::json& d) { d["shared"]["frames"][0].erase("name"); }},
      {"a frame index past the table",
       [](nlohmann::json& d) {
         d["profiles"][0]["samples"][0][0] = d["shared"]["frames"].size();
       }},
      {"one weight missing",
       [](nlohmann::json& d) { d["profiles"][0]["weights"].erase(0); }},
  };
  for (const Breakage& b : breakages) {
    CAPTURE(b.what);
    nlohmann::json doc = good;
    b.apply(doc);
    const std::string path = work.file("broken.speedscope.json");
    write_json(path, doc);
    const rt::ProcessResult v = validate({path});
    CHECK_MESSAGE(v.exit_code == 1, v.err);
    CHECK(!v.err.empty());
  }
}

TEST_CASE(
    "perf-script output of every golden folder loads in speedscope's "
    "and Firefox Profiler's importers") {
  rt::TempDir work;
  size_t checked = 0;
  for (const fs::path& folder : golden_folders()) {
    const rt::ProcessResult r =
        report(folder, work.path(), {"--format", "perf-script"});
    if (r.out.empty()) continue;  // a folder without samples
    check_importable(r.out, folder.filename().string());
    ++checked;
  }
  CHECK(checked >= 5);
}

TEST_CASE("the importer rules reject what the importers reject") {
  // perf's own right-aligned comm (leading spaces): Firefox does not
  // recognise the file, speedscope drops the event.
  const std::vector<std::string> padded = {
      "        mp_bench   2168/2168    2662.248980513: cpu-clock:",
      "\t     55c8777ededc main (/bin/mp_bench)"};
  CHECK(!firefox_recognises(padded[0]));
  CHECK(!speedscope_rules(padded).has_value());
  // A one-character comm without padding after it: speedscope needs two.
  CHECK(!speedscope_rules({"a 1/1 1.000000000: cpu-clock:"}).has_value());
  CHECK(speedscope_rules({"a               1/1 1.000000000: cpu-clock:"})
            .has_value());
  // A frame whose file has a space is skipped by speedscope.
  const auto spaced = speedscope_rules(
      {"bench 1/1 1.000000000: cpu-clock:", "\t 1234 main (/a b/bench)"});
  REQUIRE(spaced.has_value());
  CHECK(spaced->frames == 0);
}
