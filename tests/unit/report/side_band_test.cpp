// Side-band records in time order (report.cpp): within a round, perf writes
// each CPU's buffer in turn, so a FORK may come in the file before the
// COMM exec that happened earlier on another CPU. Names are those in force
// at each sample's time: a thread forked just after an exec has the new
// name, a sample taken before the exec the old one.
#include <linux/perf_event.h>

#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "report/report.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

namespace perf = runner::format::perf;
using Bytes = runner::format::ByteWriter;

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;

// A record: header (type, misc, size) + body.
void record(Bytes& file, uint32_t type, uint16_t misc, const Bytes& body) {
  file.u32(type);
  file.u16(misc);
  file.u16(static_cast<uint16_t>(8 + body.size()));
  file.bytes(body.view());
}

// sample_id_all's trailer for kSampleType: pid, tid, time.
void sample_id(Bytes& b, uint32_t pid, uint32_t tid, uint64_t time) {
  b.u32(pid);
  b.u32(tid);
  b.u64(time);
}

void comm(Bytes& file, uint32_t pid, uint32_t tid, const std::string& name,
          uint64_t time, bool exec) {
  Bytes body;
  body.u32(pid);
  body.u32(tid);
  body.bytes(name);
  body.zeros(8 - name.size() % 8);  // NUL, padded to 8
  sample_id(body, pid, tid, time);
  record(file, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, body);
}

void fork(Bytes& file, uint32_t pid, uint32_t tid, uint32_t ptid,
          uint64_t time) {
  Bytes body;
  for (uint32_t v : {pid, pid, tid, ptid}) body.u32(v);
  body.u64(time);
  sample_id(body, pid, tid, time);
  record(file, PERF_RECORD_FORK, 0, body);
}

void sample(Bytes& file, uint32_t pid, uint32_t tid, uint64_t time) {
  Bytes body;
  body.u64(0x1000);
  sample_id(body, pid, tid, time);
  record(file, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body);
}

TEST_CASE("report: COMM and FORK apply at their time, not in file order") {
  runner::testing::TempDir dir;
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.size = sizeof(attr);
  attr.sample_type = kSampleType;
  attr.sample_id_all = 1;
  Bytes file;
  file.bytes(std::string_view(perf::kPipeMagic, 8));
  file.u64(perf::kPipeHeaderSize);
  Bytes attr_body;
  attr_body.bytes(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(&attr), sizeof(attr)));
  record(file, perf::kHeaderAttr, 0, attr_body);
  comm(file, 10, 10, "exec-harness", 10, false);
  // CPU 1's buffer: the thread forked at 200, and a sample taken at 50.
  fork(file, 10, 11, 10, 200);
  sample(file, 10, 10, 50);
  // CPU 0's buffer: the exec at 100, and the new thread's sample at 300.
  comm(file, 10, 10, "java", 100, true);
  sample(file, 10, 11, 300);
  record(file, perf::kFinishedRound, 0, Bytes());
  REQUIRE(runner::base::write_file_atomic(
      dir.file("perf.pipedata"), std::span<const uint8_t>(file.view())));

  runner::report::ReportOptions options;
  options.folder = dir.path();
  options.format = runner::report::ReportOptions::Format::kPerfScript;
  std::ostringstream out, err;
  auto result = runner::report::run_report(options, out, err);
  REQUIRE(result);
  INFO(out.str(), err.str());
  CHECK(result->samples_shown == 2);
  // Time order: the sample at 50 (before the exec), then the one at 300.
  const std::string text = out.str();
  const size_t before = text.find("exec-harness         10/10");
  const size_t after = text.find("java                 10/11");
  CHECK(before != std::string::npos);
  CHECK(after != std::string::npos);
  CHECK(before < after);
}

}  // namespace
