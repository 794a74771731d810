// Helpers shared by the reading-side tests: a byte builder for hand-made
// pipe-mode perf.data, running the helper programs and perf, and reading a
// whole file through PipedataReader.
#pragma once

#include <fcntl.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "base/unique_fd.hpp"
#include "format/format.hpp"
#include "perfdata/perfdata.hpp"
#include "tests/support/perf_events.hpp"

namespace runner::perfdata::testing {

inline std::string helper(const std::string& name) {
  return std::string(READING_HELPER_DIR) + "/reading_" + name;
}

// Why a deleted mapped file cannot be pinned here ("" when it can): opening
// /proc/<pid>/map_files/ needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE.
inline std::string map_files_refused() {
  auto maps = runner::base::read_file("/proc/self/maps");
  if (!maps || maps->empty()) return "/proc/self/maps is unreadable";
  // The first mapping of a file (map_files lists no anonymous one, and a
  // sanitizer build's first mapping is its anonymous shadow).
  const size_t file = maps->find(" /");
  if (file == std::string::npos) return "/proc/self/maps maps no file";
  const size_t line = maps->rfind('\n', file);
  const size_t start = line == std::string::npos ? 0 : line + 1;
  const std::string range = maps->substr(start, maps->find(' ', start) - start);
  base::UniqueFd fd(
      ::open(("/proc/self/map_files/" + range).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd) return "";
  return std::string("/proc/<pid>/map_files is refused (") +
         std::strerror(errno) +
         "): deleted mapped files cannot be pinned without CAP_SYS_ADMIN";
}

inline std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// A hand-made FORK (or EXIT) record, as the tracker receives it.
inline Record task(bool is_exit, int32_t pid, int32_t ppid, int32_t tid,
                   uint64_t time) {
  Record r;
  r.kind = RecordKind::kTask;
  r.type = is_exit ? PERF_RECORD_EXIT : PERF_RECORD_FORK;
  r.task.is_exit = is_exit;
  r.task.pid = static_cast<uint32_t>(pid);
  r.task.ppid = static_cast<uint32_t>(ppid);
  r.task.tid = static_cast<uint32_t>(tid);
  r.task.ptid = static_cast<uint32_t>(ppid);
  r.task.time = time;
  return r;
}

// Little-endian byte builder for hand-made records.
class Bytes {
 public:
  Bytes& u8(uint8_t v) { return raw(&v, 1); }
  Bytes& u16(uint16_t v) { return raw(&v, 2); }
  Bytes& u32(uint32_t v) { return raw(&v, 4); }
  Bytes& u64(uint64_t v) { return raw(&v, 8); }
  Bytes& raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    data_.insert(data_.end(), b, b + n);
    return *this;
  }
  Bytes& zeros(size_t n) {
    data_.insert(data_.end(), n, 0);
    return *this;
  }
  // NUL-terminated, padded to 8 bytes.
  Bytes& str8(const std::string& s) {
    raw(s.data(), s.size());
    return zeros(8 - s.size() % 8);
  }
  Bytes& append(const Bytes& other) {
    data_.insert(data_.end(), other.data_.begin(), other.data_.end());
    return *this;
  }
  size_t size() const { return data_.size(); }
  const std::vector<uint8_t>& data() const { return data_; }
  std::vector<uint8_t>& data() { return data_; }

 private:
  std::vector<uint8_t> data_;
};

// A record: header (type, misc, size) + body.
inline Bytes record(uint32_t type, uint16_t misc, const Bytes& body) {
  Bytes r;
  r.u32(type).u16(misc).u16(static_cast<uint16_t>(8 + body.size()));
  r.append(body);
  return r;
}

inline Bytes pipe_header() {
  Bytes b;
  b.raw(format::perf::kPipeMagic, 8).u64(format::perf::kPipeHeaderSize);
  return b;
}

inline Bytes attr_record(const perf_event_attr& attr,
                         const std::vector<uint64_t>& ids) {
  Bytes body;
  body.raw(&attr, sizeof(attr));
  for (uint64_t id : ids) body.u64(id);
  return record(format::perf::kHeaderAttr, 0, body);
}

inline void write_bytes(const std::string& path,
                        const std::vector<uint8_t>& data) {
  REQUIRE(base::write_file_atomic(path, std::span<const uint8_t>(data)));
}

struct ReadAll {
  std::vector<Record> records;
  bool opened = false;
  bool clean_eof = false;
  std::string error;  // open or next() error
  ReaderStats stats;
  std::vector<EventAttr> attrs;
  // Kept open: SampleRecord::attr points into it.
  std::optional<PipedataReader> reader;
};

// Reads until end or error; `max_records` guards against a reader that
// would never end (it is a test failure to reach it).
inline ReadAll read_all(const std::string& path,
                        size_t max_records = 10000000) {
  ReadAll out;
  auto reader =
      PipedataReader::open(path, PipedataReader::Source::kFileOrStream);
  if (!reader) {
    out.error = reader.error().what();
    return out;
  }
  out.opened = true;
  for (size_t i = 0; i < max_records; ++i) {
    auto next = reader->next();
    if (!next) {
      out.error = next.error().what();
      break;
    }
    if (!next->has_value()) {
      out.clean_eof = true;
      break;
    }
    out.records.push_back(std::move(**next));
  }
  out.stats = reader->stats();
  out.attrs = reader->attrs();
  out.reader.emplace(std::move(*reader));
  return out;
}

// Runs argv with stdout into `out_path` and stderr into `err_path`.
inline base::Result<base::ExitStatus> run_to_file(
    const std::vector<std::string>& argv, const std::string& out_path,
    const std::string& err_path) {
  base::UniqueFd out(
      ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  base::UniqueFd err(
      ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!out || !err) return base::errno_error("open output");
  base::SpawnOptions opts;
  opts.argv = argv;
  opts.stdout_fd = out.get();
  opts.stderr_fd = err.get();
  auto child = base::ChildProcess::spawn(opts);
  if (!child) return std::move(child).error();
  return child->wait();
}

// perf record -o - ... -- argv > out_path (the invocation of the spec,
// without --delay/--control).
inline void perf_record(const std::string& out_path,
                        const std::vector<std::string>& argv,
                        const std::vector<std::string>& extra = {}) {
  std::vector<std::string> cmd = {
      "perf",         "record",     "-o", "-",
      "-e",           "cpu-clock",  "-k", "CLOCK_MONOTONIC",
      "--call-graph", "dwarf,8192", "-F", "997"};
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  cmd.push_back("--");
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  auto status = run_to_file(cmd, out_path, out_path + ".stderr");
  REQUIRE(status);
  INFO("perf stderr: " << base::read_file(out_path + ".stderr").value_or(""));
  REQUIRE(status->success());
}

inline std::string run_capture(const std::vector<std::string>& argv,
                               const std::string& scratch) {
  auto status = run_to_file(argv, scratch, scratch + ".stderr");
  REQUIRE(status);
  INFO("stderr: " << base::read_file(scratch + ".stderr").value_or(""));
  REQUIRE(status->success());
  auto text = base::read_file(scratch);
  REQUIRE(text);
  return *text;
}

// A running map_file helper: the file is mapped once "ready" was read; the
// helper exits when stdin is closed.
class MappedFileProcess {
 public:
  explicit MappedFileProcess(const std::string& path) {
    int in[2], out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    base::UniqueFd in_read(in[0]), out_write(out[1]);
    stdin_.reset(in[1]);
    base::UniqueFd out_read(out[0]);
    base::SpawnOptions opts;
    opts.argv = {helper("map_file"), path};
    opts.stdin_fd = in_read.get();
    opts.stdout_fd = out_write.get();
    auto child = base::ChildProcess::spawn(opts);
    REQUIRE(child);
    child_.emplace(std::move(*child));
    in_read.reset();
    out_write.reset();
    std::string line;
    char c;
    while (::read(out_read.get(), &c, 1) == 1 && c != '\n') line += c;
    REQUIRE(line.rfind("ready", 0) == 0);
  }
  ~MappedFileProcess() { finish(); }
  int32_t pid() const { return child_->pid(); }
  void finish() {
    if (!child_ || child_->reaped()) return;
    stdin_.reset();
    auto status = child_->wait();
    CHECK(status);
  }

 private:
  base::UniqueFd stdin_;
  std::optional<base::ChildProcess> child_;
};

}  // namespace runner::perfdata::testing
