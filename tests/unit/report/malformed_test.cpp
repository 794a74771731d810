// Malformed profile folders through the report: wrong JSON types in
// perf.metadata, a URI that is not valid UTF-8, an output that cannot be
// written. The folder with samples is the fixture of tests/fuzz/ (one real
// `runner run` of bench_example: report_folder/ plus its perf.pipedata).
#include <filesystem>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fs.hpp"
#include "report/cfi.hpp"
#include "report/profile_folder.hpp"
#include "report/report.hpp"
#include "tests/support/temp_dir.hpp"

using runner::report::ProfileFolder;
using runner::testing::TempDir;

namespace {

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

void put_uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(static_cast<uint8_t>(b | (v != 0 ? 0x80 : 0)));
  } while (v != 0);
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Prefixes `entry` with its length, padded with DW_CFA_nop to 4 bytes.
void put_entry(std::vector<uint8_t>& out, std::vector<uint8_t> entry) {
  while (entry.size() % 4 != 0) entry.push_back(0);
  put_u32(out, static_cast<uint32_t>(entry.size()));
  out.insert(out.end(), entry.begin(), entry.end());
}

// The recorded fixture copied into `dir`: 18 samples in three benchmark
// windows.
void copy_fixture(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string fuzz_dir = RUNNER_FUZZ_SOURCE_DIR;
  for (const auto& entry : fs::directory_iterator(fuzz_dir + "/report_folder"))
    fs::copy_file(entry.path(), fs::path(dir) / entry.path().filename());
  fs::copy_file(fuzz_dir + "/corpus/report/dwarf_run.pipedata",
                dir + "/perf.pipedata");
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("perf.metadata with wrong JSON types: warnings name file and key") {
    TempDir dir;
    // One bad value per entry; the good entries after them are kept.
    const std::string meta = R"({
      "mapped_process_module_symbols": {"7": [
        {"perf_map_key": 5, "load_bias": 0},
        {"perf_map_key": "1__b", "load_bias": "16"},
        {"perf_map_key": "0__a", "load_bias": 4096}]},
      "mapped_process_unwind_data_by_pid": {"7": [
        {"unwind_data_key": ["0__a"], "avma_range": {"start": 1, "end": 2}},
        {"unwind_data_key": "0__a", "avma_range": "everywhere"},
        {"unwind_data_key": "0__a", "avma_range": {"start": 4096, "end": 8192},
         "base_avma": 0}]},
      "path_key_to_path": {"0__a": "/usr/bin/a", "1__b": false},
      "runner": {"pid_filter": 1, "tracked_pids": [7]}
    })";
    REQUIRE(runner::base::write_file_atomic(dir.file("perf.metadata"), meta));
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE_MESSAGE(folder, folder.error().what());
    const auto& warnings = folder->warnings();
    INFO(joined(warnings));
    CHECK(contains(warnings,
                   "perf.metadata: mapped_process_module_symbols.7[0]."
                   "perf_map_key: expected string, got number (and 1 more in "
                   "mapped_process_module_symbols)"));
    CHECK(contains(warnings,
                   "perf.metadata: mapped_process_unwind_data_by_pid.7[0]."
                   "unwind_data_key: expected string, got array (and 1 more"));
    CHECK(contains(warnings,
                   "perf.metadata: path_key_to_path.1__b: expected "
                   "string, got boolean"));
    CHECK(contains(warnings,
                   "perf.metadata: runner.pid_filter: expected "
                   "string, got number"));
    const auto* modules = folder->modules(7);
    REQUIRE(modules != nullptr);
    REQUIRE(modules->symbols.size() == 1);
    CHECK(modules->symbols[0].key == "0__a");
    CHECK(modules->symbols[0].load_bias == 4096);
    REQUIRE(modules->unwind.size() == 1);
    CHECK(modules->unwind[0].start == 4096);
    CHECK(folder->key_path("0__a") == "/usr/bin/a");
  }

  TEST_CASE("wrong types in the timestamps name the file they came from") {
    TempDir dir;
    nlohmann::json ts = {
        {"uri_by_ts", {{100, "bench"}, {"late", "other"}}},
        {"markers", {{{"SampleStart", 1}}, {{"SampleEnd", "soon"}}}}};
    const auto bytes = nlohmann::json::to_msgpack(ts);
    REQUIRE(runner::base::write_file_atomic(
        dir.file("ExecutionTimestamps.msgpack"),
        std::span<const uint8_t>(bytes.data(), bytes.size())));
    auto folder = ProfileFolder::open(dir.path());
    REQUIRE(folder);
    INFO(joined(folder->warnings()));
    CHECK(contains(folder->warnings(),
                   "ExecutionTimestamps.msgpack: uri_by_ts[1]: expected "
                   "[timestamp, uri]"));
    CHECK(contains(folder->warnings(),
                   "ExecutionTimestamps.msgpack: markers[1]: expected"));
    REQUIRE(folder->windows().size() == 1);
    CHECK(folder->windows()[0].end == UINT64_MAX);  // never stopped
  }

  TEST_CASE("a URI with an invalid UTF-8 byte is reported, as U+FFFD") {
    TempDir dir;
    copy_fixture(dir.path());
    // The fixture's timestamps with one byte of the first URI replaced.
    auto ts = nlohmann::json::from_msgpack(
        *runner::base::read_file(dir.file("ExecutionTimestamps.msgpack")));
    std::string uri = ts["uri_by_ts"][0][1];
    REQUIRE(uri.size() > 3);
    uri[uri.size() - 3] = '\xff';
    ts["uri_by_ts"][0][1] = uri;
    const auto bytes = nlohmann::json::to_msgpack(ts);
    REQUIRE(runner::base::write_file_atomic(
        dir.file("ExecutionTimestamps.msgpack"),
        std::span<const uint8_t>(bytes.data(), bytes.size())));

    runner::report::ReportOptions options;
    options.folder = dir.path();
    std::ostringstream out, err;
    auto result = runner::report::run_report(options, out, err);
    REQUIRE_MESSAGE(result, result.error().what());
    INFO(err.str());
    CHECK(result->exit_code == 0);
    CHECK(result->samples_shown > 0);
    auto text = runner::base::read_file(dir.file("report/summary.json"));
    REQUIRE(text);
    auto summary = nlohmann::json::parse(*text);
    std::string expected = uri;
    expected.replace(uri.size() - 3, 1, "\xEF\xBF\xBD");
    CHECK(summary["benchmarks"][0]["uri"] == expected);
  }

  TEST_CASE("an output that cannot be written fails the report, naming it") {
    TempDir dir;
    copy_fixture(dir.path());
    // A directory where summary.json goes: the rename onto it fails (as
    // root too, unlike a permission).
    std::filesystem::create_directories(dir.file("report/summary.json/x"));
    runner::report::ReportOptions options;
    options.folder = dir.path();
    std::ostringstream out, err;
    auto result = runner::report::run_report(options, out, err);
    REQUIRE_MESSAGE(result, result.error().what());
    INFO(err.str());
    CHECK(result->samples_shown > 0);
    CHECK(result->exit_code != 0);
    const std::string expected =
        "runner report: error: cannot write " + dir.file("report/summary.json");
    CHECK(err.str().find(expected) != std::string::npos);
    CHECK(err.str().find("Is a directory") != std::string::npos);
    CHECK(out.str().find("Report:") == std::string::npos);
  }

  // Found by fuzz_unwind_data: DW_CFA_offset's factor times the CIE's
  // data alignment overflowed int64_t (undefined behaviour, reported by
  // UBSan in the sanitizer build). It now wraps, as address arithmetic does.
  TEST_CASE("a CFA offset factor that overflows wraps instead of UB") {
    std::vector<uint8_t> eh;
    std::vector<uint8_t> cie = {0, 0, 0, 0, 1, 'z', 'R', 0};  // id, version
    put_uleb(cie, 1);                                         // code align
    cie.push_back(0x78);                                      // data align -8
    put_uleb(cie, 16);                                        // RA column
    cie.insert(cie.end(), {1, 0x00});     // augmentation: absptr FDE pointers
    cie.insert(cie.end(), {0x0c, 7, 8});  // def_cfa rsp+8
    put_entry(eh, cie);
    const uint32_t fde_at = static_cast<uint32_t>(eh.size());
    std::vector<uint8_t> fde;
    put_u32(fde, fde_at + 4);  // back to the CIE at 0
    put_u64(fde, 0x1000);      // pc_begin
    put_u64(fde, 0x100);       // pc_range
    put_uleb(fde, 0);          // augmentation data
    fde.push_back(0x80 | 6);   // DW_CFA_offset rbp, factor 2^62 + 1
    put_uleb(fde, (uint64_t{1} << 62) + 1);
    put_entry(eh, fde);
    put_u32(eh, 0);  // terminator
    auto frame = runner::report::EhFrame::create(eh, 0x4000, std::nullopt, 0);
    REQUIRE_MESSAGE(frame, frame.error().what());
    auto row = frame->find_row(0x1010);
    REQUIRE_MESSAGE(row, row.error().what());
    CHECK(row->cfa.reg == 7);
    CHECK(row->cfa.offset == 8);
    CHECK(row->regs[6].kind == runner::report::RegRule::Kind::kOffset);
    // (2^62 + 1) * -8 modulo 2^64.
    CHECK(row->regs[6].offset == -8);
  }
}
