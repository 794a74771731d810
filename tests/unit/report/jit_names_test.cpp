// Names of JIT code whose addresses were reused, at the sample's time.
// A crafted jitdump of one process (two bodies loaded at the same address,
// one overlapping them, one moved away and a new one loaded where it was),
// finalize's real build_jit_artifacts on it, the folder's perf-<pid>.map
// (the runtime's perf map, then the dump's names, as finalize writes it) and
// jit-<pid>.timeline; then the report's Symbolizer at known times over
// every address of the bodies. The oracle comes from the crafted records
// alone: at time t an address belongs to the record covering it with the
// latest time at or before t whose body has not moved away by t; where no
// record does, the perf map's last line covering it (the rule for files
// without times).
#include "report/jit_names.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "finalize/jit_artifacts.hpp"
#include "format/format.hpp"
#include "report/profile_folder.hpp"
#include "report/symbolizer.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::report {
namespace {

constexpr int32_t kPid = 4242;
constexpr uint64_t kX = 0x7f0000001000, kY = 0x7f0000002000,
                   kZ = 0x7f0000003000;

// One placement of a body: loaded (or moved) at `addr` at `time`, gone at
// `gone` (its next move).
struct Placement {
  uint64_t time, addr, size;
  std::string name;
  uint64_t gone = UINT64_MAX;
};

struct Crafted {
  std::vector<uint8_t> dump;
  std::vector<Placement> placements;
};

void prefix(format::ByteWriter& w, format::JitRecordId id, uint64_t total,
            uint64_t time) {
  w.u32(static_cast<uint32_t>(id));
  w.u32(static_cast<uint32_t>(total));
  w.u64(time);
}

void load(format::ByteWriter& w, Crafted& c, uint64_t time, uint64_t addr,
          uint64_t size, const std::string& name, uint64_t index) {
  prefix(w, format::JitRecordId::kCodeLoad, 56 + name.size() + 1 + size, time);
  w.u32(kPid);
  w.u32(kPid);
  w.u64(addr);
  w.u64(addr);
  w.u64(size);
  w.u64(index);
  w.bytes(name);
  w.u8(0);
  w.zeros(size);
  c.placements.push_back({time, addr, size, name});
}

void move(format::ByteWriter& w, Crafted& c, uint64_t time, size_t placement,
          uint64_t to, uint64_t index) {
  Placement& from = c.placements[placement];
  prefix(w, format::JitRecordId::kCodeMove, 64, time);
  w.u32(kPid);
  w.u32(kPid);
  w.u64(to);
  w.u64(from.addr);
  w.u64(to);
  w.u64(from.size);
  w.u64(index);
  from.gone = time;
  c.placements.push_back({time, to, from.size, from.name});
}

Crafted crafted_dump() {
  Crafted c;
  format::ByteWriter w;
  w.u32(format::kJitDumpMagic);
  w.u32(1);
  w.u32(40);
  w.u32(62);
  w.u32(0);
  w.u32(kPid);
  w.u64(0);
  w.u64(0);
  load(w, c, 1000, kX, 0x100, "Eval:~ node:internal/streams/add-abort-signal",
       1);
  load(w, c, 1500, kY, 0x80, "LazyCompile:~moved", 2);
  load(w, c, 2000, kX, 0x100, "LazyCompile:*fibo", 3);         // reuses X
  load(w, c, 3000, kX + 0x80, 0x40, "LazyCompile:*inner", 4);  // overlaps
  move(w, c, 4000, 1, kZ, 2);                                  // Y -> Z
  load(w, c, 5000, kY, 0x80, "LazyCompile:*after_move", 5);    // reuses Y
  c.dump = w.take();
  return c;
}

// The runtime's own perf map (no times): the same bodies, in order.
std::string runtime_perf_map() {
  return "7f0000001000 100 Eval:~ node:internal/streams/add-abort-signal\n"
         "7f0000002000 80 LazyCompile:~moved\n"
         "7f0000001000 100 LazyCompile:*fibo\n"
         "7f0000001080 40 LazyCompile:*inner\n"
         "7f0000003000 80 LazyCompile:~moved\n"
         "7f0000002000 80 LazyCompile:*after_move\n";
}

// The oracle (see the top of the file); "" when nothing covers `addr`.
std::string expected_name(const Crafted& c, uint64_t addr, uint64_t time) {
  const Placement* best = nullptr;
  for (const Placement& p : c.placements)
    if (addr >= p.addr && addr < p.addr + p.size && p.time <= time &&
        time < p.gone && (best == nullptr || p.time >= best->time))
      best = &p;
  if (best != nullptr) return best->name;
  std::string last;
  for (const auto& e : format::parse_perf_map(runtime_perf_map()))
    if (addr >= e.start && addr < e.start + e.size) last = e.name;
  return last;
}

TEST_CASE(
    "JIT names: a reused address is named after the code there at the "
    "sample's time") {
  testing::TempDir dir;
  const Crafted c = crafted_dump();
  const std::string dump_path =
      dir.file("jit-" + std::to_string(kPid) + ".dump");
  REQUIRE(base::write_file_atomic(
      dump_path, std::string_view(reinterpret_cast<const char*>(c.dump.data()),
                                  c.dump.size())));
  const std::string folder = dir.file("profile");
  REQUIRE(base::make_directories(folder));
  const format::ProfileLayout layout(folder);
  perfdata::TrackedMapping marker;
  marker.pid = kPid;
  marker.path = dump_path;
  finalize::JitArtifacts jit =
      finalize::build_jit_artifacts(layout, {marker}, {{kPid, ::geteuid()}}, 0);
  CHECK(jit.counts["jit_bodies"] == 5);
  CHECK(jit.counts.count("jitdump_truncated") == 0);
  REQUIRE(base::write_file_atomic(
      layout.perf_map(kPid), runtime_perf_map() + jit.perf_map_lines[kPid]));
  REQUIRE(base::write_file_atomic(
      layout.jit_timeline(kPid),
      format::format_jit_timeline(jit.timeline_by_pid[kPid])));

  auto pf = ProfileFolder::open(folder);
  REQUIRE(pf.has_value());
  Symbolizer symbolizer(*pf, false);
  size_t checked = 0, reused = 0;
  for (uint64_t time = 0; time <= 6000; time += 250) {
    for (uint64_t addr = kX - 0x10; addr < kZ + 0x90; addr += 0x8) {
      const std::string want = expected_name(c, addr, time);
      auto frames = symbolizer.resolve_frames(kPid, addr, true, time);
      REQUIRE(frames.size() == 1);
      const FrameInfo& got = symbolizer.frame(frames[0]);
      CAPTURE(addr);
      CAPTURE(time);
      if (want.empty()) {
        CHECK_FALSE(got.resolved);
      } else {
        CHECK(got.name == want);
        ++checked;
        reused += (addr >= kX && addr < kX + 0x100 && time < 2000) ||
                  (addr >= kY && addr < kY + 0x80 && time < 5000);
      }
    }
  }
  // The frames where the older code is the right name were checked too.
  CHECK(checked > 500);
  CHECK(reused > 100);
}

TEST_CASE("JIT names without times: the last line covering an address wins") {
  const std::vector<format::PerfMapEntry> map = {
      {0x1000, 0x100, "first"},
      {0x1000, 0x100, "second"},  // the same range, written later
      {0x1040, 0x10, "nested"},   // inside both, later still
      {0x1000, 0x20, "third"},    // a part of it, last
      {0x2000, 0x10, "alone"},
  };
  const JitNames names(map, {});
  auto name_at = [&](uint64_t addr) -> std::string {
    const JitNames::Entry* e = names.find(addr, 12345);
    return e == nullptr ? "" : e->name;
  };
  CHECK(name_at(0x1000) == "third");
  CHECK(name_at(0x101f) == "third");
  CHECK(name_at(0x1020) == "second");
  CHECK(name_at(0x1040) == "nested");
  CHECK(name_at(0x104f) == "nested");
  CHECK(name_at(0x1050) == "second");
  CHECK(name_at(0x10ff) == "second");
  CHECK(name_at(0x1100) == "");
  CHECK(name_at(0xfff) == "");
  CHECK(name_at(0x2008) == "alone");
  CHECK(name_at(0x2010) == "");
}

TEST_CASE("JIT names: a timeline entry holds only while its body is there") {
  const std::vector<format::TimedJitEntry> timeline = {
      {0x1000, 0x100, 100, 400, "moved_away"},
      {0x1000, 0x100, 500, UINT64_MAX, "next"},
  };
  const JitNames names({}, timeline);
  auto name_at = [&](uint64_t time) -> std::string {
    const JitNames::Entry* e = names.find(0x1010, time);
    return e == nullptr ? "" : e->name;
  };
  CHECK(name_at(99) == "");
  CHECK(name_at(100) == "moved_away");
  CHECK(name_at(399) == "moved_away");
  CHECK(name_at(400) == "");
  CHECK(name_at(500) == "next");
}

}  // namespace
}  // namespace runner::report
