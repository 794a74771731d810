// PipedataReader on hand-made files: every sample field layout, side-band
// records with their sample_id_all trailers, user records, and broken
// streams (truncated at every byte, impossible sizes, compressed, garbage).
#include <sys/mman.h>

#include <random>
#include <set>

#include <doctest/doctest.h>

#include "perfdata/perfdata.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner::perfdata;
using namespace runner::perfdata::testing;
namespace pf = runner::format::perf;

namespace {

constexpr uint64_t kIdA = 100, kIdA2 = 101, kIdB = 200;

// Attr A: every sample field the kernel can emit.
perf_event_attr attr_a() {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof(a);
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                  PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                  PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                  PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
                  PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
                  PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
                  PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
                  PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR |
                  PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |
                  PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX;
  a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                  PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
                  PERF_FORMAT_LOST;
  a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
  a.sample_regs_user = 0b1011;  // 3 registers
  a.sample_regs_intr = 0b11;    // 2 registers
  a.sample_stack_user = 64;
  a.sample_id_all = 1;
  return a;
}

// Attr B: a short layout.
perf_event_attr attr_b() {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof(a);
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                  PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  a.sample_id_all = 1;
  return a;
}

Bytes sample_a_body(uint64_t time) {
  Bytes b;
  b.u64(kIdA);                 // IDENTIFIER
  b.u64(0x401000);             // IP
  b.u32(10).u32(11);           // TID
  b.u64(time);                 // TIME
  b.u64(0xdead);               // ADDR
  b.u64(kIdA);                 // ID
  b.u64(7);                    // STREAM_ID
  b.u32(3).u32(0);             // CPU
  b.u64(1000);                 // PERIOD
  b.u64(2).u64(111).u64(222);  // READ: nr, enabled, running
  b.u64(1).u64(kIdA).u64(0);   //   value, id, lost
  b.u64(2).u64(kIdA2).u64(0);
  b.u64(3).u64(PERF_CONTEXT_USER).u64(0x401000).u64(0x401100);  // CALLCHAIN
  b.u32(12).zeros(12);  // RAW (4 + 12 = 16: u64 aligned)
  b.u64(2).u64(5);      // BRANCH_STACK: nr, hw_idx
  b.zeros(2 * sizeof(perf_branch_entry));
  b.u64(PERF_SAMPLE_REGS_ABI_64).u64(0xa1).u64(0xa2).u64(0xa3);  // REGS_USER
  b.u64(64);  // STACK_USER size
  for (int i = 0; i < 64; ++i) b.u8(static_cast<uint8_t>(i));
  b.u64(40);                                     // dyn_size
  b.u64(9);                                      // WEIGHT
  b.u64(0x55);                                   // DATA_SRC
  b.u64(0);                                      // TRANSACTION
  b.u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2);  // REGS_INTR
  b.u64(0x1000);                                 // PHYS_ADDR
  b.u64(42);                                     // CGROUP
  b.u64(4096);                                   // DATA_PAGE_SIZE
  b.u64(4096);                                   // CODE_PAGE_SIZE
  b.u64(16).zeros(16);                           // AUX
  return b;
}

Bytes sample_b_body(uint64_t ip, uint64_t time) {
  Bytes b;
  b.u64(kIdB).u64(ip).u32(20).u32(21).u64(time).u32(1).u32(0).u64(500);
  return b;
}

// sample_id_all trailer of attr A: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
Bytes trailer_a(uint32_t pid, uint32_t tid, uint64_t time) {
  Bytes b;
  b.u32(pid).u32(tid).u64(time).u64(kIdA).u64(7).u32(2).u32(0).u64(kIdA);
  return b;
}
// Attr B: TID, TIME, CPU, IDENTIFIER.
Bytes trailer_b(uint32_t pid, uint32_t tid, uint64_t time) {
  Bytes b;
  b.u32(pid).u32(tid).u64(time).u32(1).u32(0).u64(kIdB);
  return b;
}

Bytes mmap2_body(uint32_t pid, const std::string& path, uint32_t prot,
                 const Bytes& trailer) {
  Bytes b;
  b.u32(pid).u32(pid).u64(0x400000).u64(0x2000).u64(0x1000);
  b.u32(0xfe).u32(1).u64(12345).u64(6);  // maj, min, ino, ino_generation
  b.u32(prot).u32(MAP_PRIVATE).str8(path).append(trailer);
  return b;
}

Bytes event_desc_feature() {
  Bytes body;
  body.u64(pf::kFeatEventDesc);
  body.u32(1).u32(sizeof(perf_event_attr));
  perf_event_attr a = attr_a();
  body.raw(&a, sizeof(a));
  body.u32(2);                                       // nr_ids
  body.u32(16).raw("cycles-a\0\0\0\0\0\0\0\0", 16);  // perf string
  body.u64(kIdA).u64(kIdA2);
  return record(pf::kHeaderFeature, 0, body);
}

struct Built {
  std::vector<uint8_t> bytes;
  std::vector<size_t> boundaries;         // offsets where a whole record ends
  std::vector<uint32_t> delivered_types;  // records next() returns
};

// A file with one of everything; records the offsets between records so
// truncation tests know where a cut is clean.
Built build_everything() {
  Built out;
  Bytes f = pipe_header();
  out.boundaries.push_back(f.size());
  auto add = [&](const Bytes& rec, bool delivered = true) {
    f.append(rec);
    out.boundaries.push_back(f.size());
    if (delivered) {
      uint32_t type;
      std::memcpy(&type, rec.data().data(), 4);
      out.delivered_types.push_back(type);
    }
  };
  add(attr_record(attr_a(), {kIdA, kIdA2}));
  add(attr_record(attr_b(), {kIdB}));
  add(event_desc_feature());
  {
    Bytes b;
    b.u64(2).u64(kIdB).str8("evt-b");  // EVENT_UPDATE NAME
    add(record(pf::kEventUpdate, 0, b));
  }
  {
    Bytes b;
    b.u32(3).u32(3).str8("bench").append(trailer_a(3, 3, 900));
    add(record(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, b));
  }
  add(record(PERF_RECORD_MMAP2, 0,
             mmap2_body(3, "/usr/bin/bench x", PROT_READ | PROT_EXEC,
                        trailer_a(3, 3, 1000))));
  {
    Bytes b;  // build-id variant
    b.u32(3).u32(3).u64(0x7f0000).u64(0x1000).u64(0);
    b.u8(20).zeros(3);
    for (int i = 0; i < 20; ++i) b.u8(static_cast<uint8_t>(0xb0 + i));
    b.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE).str8("/lib/libb.so");
    b.append(trailer_b(3, 3, 1100));
    add(record(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, b));
  }
  {
    Bytes b;  // old MMAP, data mapping
    b.u32(3).u32(3).u64(0x10000).u64(0x1000).u64(0).str8("/data/file");
    b.append(trailer_a(3, 3, 1150));
    add(record(PERF_RECORD_MMAP, PERF_RECORD_MISC_MMAP_DATA, b));
  }
  add(record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sample_a_body(1200)));
  add(record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
             sample_b_body(0x402000, 1300)));
  {
    Bytes b;
    b.u32(4).u32(3).u32(4).u32(3).u64(1400).append(trailer_a(4, 4, 1400));
    add(record(PERF_RECORD_FORK, 0, b));
  }
  {
    Bytes b;
    b.u32(4).u32(3).u32(4).u32(3).u64(1500).append(trailer_b(4, 4, 1500));
    add(record(PERF_RECORD_EXIT, 0, b));
  }
  {
    Bytes b;
    b.u64(kIdA).u64(17).append(trailer_a(0, 0, 1600));
    add(record(PERF_RECORD_LOST, 0, b));
  }
  add(record(pf::kFinishedRound, 0, Bytes()));
  {
    // HEADER_TRACING_DATA: u32 size (+ pad) in the record, the payload
    // (13 bytes, padded to 16) after it.
    Bytes b;
    b.u32(13).u32(0);
    Bytes rec = record(pf::kHeaderTracingData, 0, b);
    rec.zeros(16);
    add(rec);
  }
  {
    Bytes b;  // a sample with an identifier no attr has: skipped
    b.u64(999).u64(1).u32(1).u32(1).u64(1).u32(0).u32(0).u64(1);
    add(record(PERF_RECORD_SAMPLE, 0, b), false);
  }
  {
    Bytes b = sample_b_body(0x403000, 1700);  // malformed: 8 bytes short
    b.data().resize(b.size() - 8);
    add(record(PERF_RECORD_SAMPLE, 0, b), false);
  }
  {
    Bytes b;  // PERF_RECORD_TEXT_POKE: not decoded, delivered raw
    b.u64(0xffffffff81000000).u16(0).u16(0).zeros(4);
    b.append(trailer_a(0, 0, 1750));
    add(record(PERF_RECORD_TEXT_POKE, 0, b));
  }
  add(record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
             sample_b_body(0x404000, 1800)));
  out.bytes = f.data();
  return out;
}

}  // namespace

TEST_SUITE("profiler") {
  TEST_CASE("reader decodes every record kind of a hand-made file") {
    runner::testing::TempDir dir;
    Built built = build_everything();
    write_bytes(dir.file("all.pipedata"), built.bytes);
    ReadAll all = read_all(dir.file("all.pipedata"));
    REQUIRE(all.opened);
    INFO(all.error);
    REQUIRE(all.clean_eof);
    REQUIRE(all.records.size() == built.delivered_types.size());
    for (size_t i = 0; i < all.records.size(); ++i)
      CHECK(all.records[i].type == built.delivered_types[i]);
    CHECK(all.stats.unknown_id_samples == 1);
    CHECK(all.stats.malformed_records == 1);
    CHECK(all.stats.samples == 3);
    CHECK(all.stats.bytes == built.bytes.size());

    REQUIRE(all.attrs.size() == 2);
    CHECK(all.attrs[0].attr.sample_type == attr_a().sample_type);
    CHECK(all.attrs[0].ids == std::vector<uint64_t>{kIdA, kIdA2});
    CHECK(all.attrs[0].name == "cycles-a");  // from EVENT_DESC
    CHECK(all.attrs[1].name == "evt-b");     // from EVENT_UPDATE

    const auto& recs = all.records;
    CHECK(recs[0].kind == RecordKind::kAttr);
    CHECK(recs[2].kind == RecordKind::kFeature);
    CHECK(recs[3].kind == RecordKind::kOther);

    const CommRecord& comm = recs[4].comm;
    REQUIRE(recs[4].kind == RecordKind::kComm);
    CHECK(comm.comm == "bench");
    CHECK(comm.exec);
    CHECK(comm.sample_id.time == 900);

    REQUIRE(recs[5].kind == RecordKind::kMmap2);
    const Mmap2Record& m = recs[5].mmap;
    CHECK(m.pid == 3);
    CHECK(m.addr == 0x400000);
    CHECK(m.len == 0x2000);
    CHECK(m.pgoff == 0x1000);
    CHECK(m.maj == 0xfe);
    CHECK(m.min == 1);
    CHECK(m.ino == 12345);
    CHECK(m.ino_generation == 6);
    CHECK(m.prot == (PROT_READ | PROT_EXEC));
    CHECK(m.filename == "/usr/bin/bench x");
    CHECK_FALSE(m.has_build_id);
    CHECK(m.sample_id.pid == 3);
    CHECK(m.sample_id.tid == 3);
    CHECK(m.sample_id.time == 1000);
    CHECK(m.sample_id.id == kIdA);
    CHECK(m.sample_id.cpu == 2);

    REQUIRE(recs[6].kind == RecordKind::kMmap2);
    const Mmap2Record& bid = recs[6].mmap;
    CHECK(bid.has_build_id);
    REQUIRE(bid.build_id.size() == 20);
    CHECK(bid.build_id[0] == 0xb0);
    CHECK(bid.build_id[19] == 0xb0 + 19);
    CHECK(bid.ino == 0);
    CHECK(bid.filename == "/lib/libb.so");
    CHECK(bid.sample_id.time == 1100);  // trailer of attr B (other layout)
    CHECK(bid.sample_id.id == kIdB);

    REQUIRE(recs[7].kind == RecordKind::kMmap2);
    CHECK(recs[7].type == PERF_RECORD_MMAP);
    CHECK(recs[7].mmap.filename == "/data/file");
    CHECK((recs[7].mmap.prot & PROT_EXEC) == 0);

    REQUIRE(recs[8].kind == RecordKind::kSample);
    const SampleRecord& s = recs[8].sample;
    CHECK(s.id == kIdA);
    CHECK(s.ip == 0x401000);
    CHECK(s.pid == 10);
    CHECK(s.tid == 11);
    CHECK(s.time == 1200);
    CHECK(s.addr == 0xdead);
    CHECK(s.stream_id == 7);
    CHECK(s.cpu == 3);
    CHECK(s.period == 1000);
    CHECK(s.misc == PERF_RECORD_MISC_USER);
    CHECK(s.callchain ==
          std::vector<uint64_t>{PERF_CONTEXT_USER, 0x401000, 0x401100});
    CHECK(s.regs_abi == PERF_SAMPLE_REGS_ABI_64);
    CHECK(s.regs_mask == 0b1011);
    CHECK(s.regs == std::vector<uint64_t>{0xa1, 0xa2, 0xa3});
    CHECK(s.stack_size == 64);
    REQUIRE(s.stack.size() == 40);
    CHECK(s.stack[0] == 0);
    CHECK(s.stack[39] == 39);
    CHECK(s.weight == 9);
    CHECK(s.data_src == 0x55);
    REQUIRE(s.attr != nullptr);
    CHECK(s.attr->name == "cycles-a");

    REQUIRE(recs[9].kind == RecordKind::kSample);
    CHECK(recs[9].sample.ip == 0x402000);
    CHECK(recs[9].sample.pid == 20);
    CHECK(recs[9].sample.cpu == 1);
    CHECK(recs[9].sample.period == 500);
    CHECK(recs[9].sample.attr->attr.config == PERF_COUNT_SW_TASK_CLOCK);
    CHECK(recs[9].sample.callchain.empty());
    CHECK(recs[9].sample.regs_abi == 0);

    REQUIRE(recs[10].kind == RecordKind::kTask);
    CHECK_FALSE(recs[10].task.is_exit);
    CHECK(recs[10].task.pid == 4);
    CHECK(recs[10].task.ppid == 3);
    CHECK(recs[10].task.time == 1400);
    REQUIRE(recs[11].kind == RecordKind::kTask);
    CHECK(recs[11].task.is_exit);
    CHECK(recs[11].task.sample_id.time == 1500);

    REQUIRE(recs[12].kind == RecordKind::kLost);
    CHECK(recs[12].lost.id == kIdA);
    CHECK(recs[12].lost.lost == 17);
    CHECK(recs[13].kind == RecordKind::kFinishedRound);
    CHECK(recs[14].type == pf::kHeaderTracingData);
    CHECK(recs[15].kind == RecordKind::kOther);
    CHECK(recs[15].type == PERF_RECORD_TEXT_POKE);
    CHECK(recs[15].raw.size() == recs[15].raw[6] + recs[15].raw[7] * 256u);
    REQUIRE(recs[16].kind == RecordKind::kSample);
    CHECK(recs[16].sample.ip == 0x404000);
  }

  TEST_CASE("reader: a cut at every byte ends with an Error or a clean end") {
    runner::testing::TempDir dir;
    Built built = build_everything();
    ReadAll full;
    {
      write_bytes(dir.file("full"), built.bytes);
      full = read_all(dir.file("full"));
      REQUIRE(full.clean_eof);
    }
    std::set<size_t> boundaries(built.boundaries.begin(),
                                built.boundaries.end());
    std::string path = dir.file("cut");
    for (size_t cut = 0; cut <= built.bytes.size(); ++cut) {
      CAPTURE(cut);
      write_bytes(path, std::vector<uint8_t>(built.bytes.begin(),
                                             built.bytes.begin() + cut));
      ReadAll r = read_all(path, 10000);
      if (cut < pf::kPipeHeaderSize) {
        CHECK_FALSE(r.opened);
        CHECK_FALSE(r.error.empty());
        continue;
      }
      REQUIRE(r.opened);
      // Clean exactly at record boundaries, an error anywhere else.
      CHECK(r.clean_eof == (boundaries.count(cut) != 0));
      CHECK(r.clean_eof != !r.error.empty());
      // Everything before the cut was delivered, identically.
      REQUIRE(r.records.size() <= full.records.size());
      for (size_t i = 0; i < r.records.size(); ++i)
        CHECK(r.records[i].type == full.records[i].type);
      size_t whole = 0;
      for (size_t b : built.boundaries)
        if (b <= cut) ++whole;
      CHECK(r.stats.records == whole - 1);
    }
  }

  TEST_CASE("reader rejects broken streams with clear errors") {
    runner::testing::TempDir dir;
    Bytes start = pipe_header();
    start.append(attr_record(attr_b(), {kIdB}));
    start.append(record(PERF_RECORD_SAMPLE, 0, sample_b_body(1, 2)));

    SUBCASE("compressed records") {
      Bytes f = start;
      f.append(record(pf::kCompressed, 0, Bytes().u64(0).u64(0)));
      f.append(record(PERF_RECORD_SAMPLE, 0, sample_b_body(1, 3)));
      write_bytes(dir.file("f"), f.data());
      ReadAll r = read_all(dir.file("f"));
      CHECK(r.records.size() == 2);
      // Without the HEADER_COMPRESSED feature that perf -z writes first.
      CHECK(r.error.find("no HEADER_COMPRESSED feature") != std::string::npos);
    }
    SUBCASE("a record size below the header size") {
      for (uint16_t bad : {0, 1, 7}) {
        Bytes f = start;
        f.u32(PERF_RECORD_SAMPLE).u16(0).u16(bad).zeros(64);
        write_bytes(dir.file("f"), f.data());
        ReadAll r = read_all(dir.file("f"), 100);
        CHECK(r.records.size() == 2);
        CHECK(r.error.find("impossible record size") != std::string::npos);
      }
    }
    SUBCASE("an absurd out-of-band payload") {
      Bytes f = start;
      Bytes b;
      b.u64(uint64_t{1} << 40).zeros(32);  // AUXTRACE size
      f.append(record(pf::kAuxtrace, 0, b));
      write_bytes(dir.file("f"), f.data());
      ReadAll r = read_all(dir.file("f"));
      CHECK(r.error.find("impossible payload size") != std::string::npos);
    }
    SUBCASE("the reader stays at the end after an error") {
      Bytes f = start;
      f.u32(9).u16(0).u16(4);
      write_bytes(dir.file("f"), f.data());
      auto reader = PipedataReader::open(dir.file("f"));
      REQUIRE(reader);
      for (int i = 0; i < 2; ++i) REQUIRE(reader->next());
      CHECK_FALSE(reader->next());
      auto after = reader->next();
      REQUIRE(after);
      CHECK_FALSE(after->has_value());
    }
    SUBCASE("an empty file") {
      write_bytes(dir.file("f"), {});
      ReadAll r = read_all(dir.file("f"));
      CHECK_FALSE(r.opened);
      CHECK(r.error.find("empty") != std::string::npos);
    }
    SUBCASE("a missing file") {
      ReadAll r = read_all(dir.file("nope"));
      CHECK_FALSE(r.opened);
      CHECK(r.error.find("No such file") != std::string::npos);
    }
    SUBCASE("a perf.data (file mode) header") {
      Bytes f;
      f.raw(pf::kPipeMagic, 8).u64(104).zeros(200);
      write_bytes(dir.file("f"), f.data());
      ReadAll r = read_all(dir.file("f"));
      CHECK_FALSE(r.opened);
      CHECK(r.error.find("not pipe mode") != std::string::npos);
    }
    SUBCASE("not perf data at all") {
      write_bytes(dir.file("f"), std::vector<uint8_t>(100, 'x'));
      ReadAll r = read_all(dir.file("f"));
      CHECK_FALSE(r.opened);
      CHECK(r.error.find("bad magic") != std::string::npos);
    }
  }

  TEST_CASE("reader survives garbage after a valid header") {
    runner::testing::TempDir dir;
    std::mt19937_64 rng(1234);
    for (int round = 0; round < 300; ++round) {
      CAPTURE(round);
      Bytes f = pipe_header();
      if (round % 2 == 0) f.append(attr_record(attr_a(), {kIdA}));
      if (round % 3 == 0) f.append(attr_record(attr_b(), {kIdB}));
      size_t n = rng() % 4096;
      for (size_t i = 0; i < n; ++i) f.u8(static_cast<uint8_t>(rng()));
      // Also plausible headers with random bodies, to reach the decoders.
      for (int k = 0; k < 20; ++k) {
        uint16_t size = static_cast<uint16_t>(8 + rng() % 256);
        uint32_t type = static_cast<uint32_t>(rng() % 12);
        f.u32(type).u16(static_cast<uint16_t>(rng())).u16(size);
        for (int i = 8; i < size; ++i) f.u8(static_cast<uint8_t>(rng()));
      }
      write_bytes(dir.file("g"), f.data());
      ReadAll r = read_all(dir.file("g"), 100000);
      REQUIRE(r.opened);
      CHECK((r.clean_eof || !r.error.empty()));
    }
  }

  TEST_CASE("reader: samples identified by PERF_SAMPLE_ID, single attr") {
    runner::testing::TempDir dir;
    SUBCASE("two attrs with ID at the same position") {
      perf_event_attr c{}, d{};
      c.size = d.size = sizeof(perf_event_attr);
      c.sample_type = d.sample_type =
          PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID;
      d.sample_type |= PERF_SAMPLE_PERIOD;  // differs after the id
      c.config = 1;
      d.config = 2;
      Bytes f = pipe_header();
      f.append(attr_record(c, {31}));
      f.append(attr_record(d, {32}));
      f.append(record(PERF_RECORD_SAMPLE, 0,
                      Bytes().u64(0x10).u32(1).u32(1).u64(32).u64(77)));
      f.append(record(PERF_RECORD_SAMPLE, 0,
                      Bytes().u64(0x20).u32(1).u32(1).u64(31)));
      write_bytes(dir.file("f"), f.data());
      ReadAll r = read_all(dir.file("f"));
      REQUIRE(r.clean_eof);
      REQUIRE(r.records.size() == 4);
      CHECK(r.records[2].sample.period == 77);
      CHECK(r.records[2].sample.attr->attr.config == 2);
      CHECK(r.records[3].sample.ip == 0x20);
      CHECK(r.records[3].sample.attr->attr.config == 1);
    }
    SUBCASE("one attr without any identifier") {
      perf_event_attr c{};
      c.size = PERF_ATTR_SIZE_VER5;  // an older, shorter attr
      c.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
      Bytes f = pipe_header();
      Bytes body;
      body.raw(&c, PERF_ATTR_SIZE_VER5).u64(5);
      f.append(record(pf::kHeaderAttr, 0, body));
      f.append(record(PERF_RECORD_SAMPLE, 0, Bytes().u64(0x30).u64(99)));
      // No sample_id_all: the comm runs to the end of the record.
      f.append(record(PERF_RECORD_COMM, 0, Bytes().u32(1).u32(1).str8("name")));
      write_bytes(dir.file("f"), f.data());
      ReadAll r = read_all(dir.file("f"));
      REQUIRE(r.clean_eof);
      REQUIRE(r.records.size() == 3);
      CHECK(r.attrs[0].ids == std::vector<uint64_t>{5});
      CHECK(r.attrs[0].attr.size == PERF_ATTR_SIZE_VER5);
      CHECK(r.records[1].sample.time == 99);
      CHECK(r.records[2].comm.comm == "name");
    }
  }

  TEST_CASE("reader: attr pointers stay valid as more attrs arrive") {
    runner::testing::TempDir dir;
    Bytes f = pipe_header();
    f.append(attr_record(attr_b(), {kIdB}));
    f.append(record(PERF_RECORD_SAMPLE, 0, sample_b_body(1, 2)));
    for (uint64_t i = 0; i < 100; ++i) {
      perf_event_attr a = attr_b();
      a.config = 1000 + i;
      f.append(attr_record(a, {1000 + i}));
    }
    write_bytes(dir.file("f"), f.data());
    auto reader = PipedataReader::open(dir.file("f"));
    REQUIRE(reader);
    REQUIRE(reader->next());
    auto sample = reader->next();
    REQUIRE(sample);
    REQUIRE(sample->has_value());
    const EventAttr* attr = (*sample)->sample.attr;
    while (true) {
      auto next = reader->next();
      REQUIRE(next);
      if (!next->has_value()) break;
    }
    CHECK(reader->attrs().size() == 101);
    CHECK(attr == reader->attr_for_id(kIdB));
    CHECK(attr->attr.config == PERF_COUNT_SW_TASK_CLOCK);
    CHECK(reader->attr_for_id(1050)->attr.config == 1050);
    CHECK(reader->attr_for_id(5) == nullptr);
  }
}
