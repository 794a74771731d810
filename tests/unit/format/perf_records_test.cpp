// perf.pipedata record layouts: what the writer encodes, the reader's
// decoders read back; short records are refused, never read past.
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"

namespace runner::format::perf {
namespace {

std::span<const uint8_t> body_of(const std::vector<uint8_t>& record) {
  return std::span<const uint8_t>(record).subspan(sizeof(perf_event_header));
}

perf_event_header header_of(const std::vector<uint8_t>& record) {
  perf_event_header h{};
  std::memcpy(&h, record.data(), sizeof(h));
  return h;
}

TEST_SUITE("format") {
  TEST_CASE("perf records: pipe header and attr record round-trip") {
    auto header = encode_pipe_header();
    REQUIRE(header.size() == kPipeHeaderSize);
    CHECK(std::memcmp(header.data(), "PERFILE2", 8) == 0);
    CHECK(check_pipe_header(header));
    CHECK(check_pipe_header(std::span(header).first(12)).error().what() ==
          "truncated perf.data header (12 bytes)");
    std::vector<uint8_t> file_mode = header;
    file_mode[8] = 104;  // perf.data's file header is 104 bytes
    CHECK(check_pipe_header(file_mode).error().what().starts_with(
        "a perf.data file header (size 104)"));
    const std::string swapped = "2ELIFREP";
    CHECK(check_pipe_header({reinterpret_cast<const uint8_t*>(swapped.data()),
                             swapped.size()})
              .error()
              .what()
              .find("other byte order") != std::string::npos);
    CHECK_FALSE(check_pipe_header({}));

    perf_event_attr attr{};
    attr.type = PERF_TYPE_SOFTWARE;
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
    const std::vector<uint64_t> ids = {7, 9};
    auto record = encode_attr_record(attr, ids);
    CHECK(header_of(record).type == kHeaderAttr);
    CHECK(header_of(record).size == record.size());
    CHECK(record.size() == 8 + kAttrSize + 16);
    auto back = decode_attr_record(body_of(record));
    REQUIRE(back);
    CHECK(back->attr.size == kAttrSize);
    CHECK(back->attr.sample_type == attr.sample_type);
    CHECK(back->ids == ids);
    // A body shorter than its attr claims is refused.
    CHECK_FALSE(decode_attr_record(body_of(record).first(40)));
  }

  TEST_CASE("perf records: event desc names round-trip by id") {
    EventDesc cycles;
    cycles.name = "cycles";
    cycles.ids = {1, 2};
    EventDesc dummy;
    dummy.name = "dummy:u";
    dummy.ids = {3};
    std::vector<EventDesc> events = {cycles, dummy};
    auto payload = encode_event_desc(events);
    auto names = decode_event_desc(payload);
    REQUIRE(names.size() == 3);
    CHECK(names[0] == std::make_pair(uint64_t{1}, std::string("cycles")));
    CHECK(names[2] == std::make_pair(uint64_t{3}, std::string("dummy:u")));
    // Cut anywhere: never more names than fit, never a crash.
    for (size_t cut = 0; cut < payload.size(); ++cut)
      CHECK(decode_event_desc(std::span(payload).first(cut)).size() <= 3);
  }

  TEST_CASE("perf records: build id and finished round layouts") {
    const std::vector<uint8_t> id(20, 0xaa);
    auto record = encode_build_id_record(id, "/bin/true");
    CHECK(header_of(record).type == kHeaderBuildId);
    CHECK(record.size() == 8 + 4 + 24 + 64);
    CHECK(record[8 + 4 + 20] == 20);  // the id's size byte
    CHECK(std::string(reinterpret_cast<const char*>(record.data()) + 36) ==
          "/bin/true");
    CHECK(encode_finished_round().size() == 8);
  }

  TEST_CASE("perf records: samples decode field by field, exactly") {
    perf_event_attr attr{};
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                       PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = 0x3;
    ByteWriter w;
    w.u64(0x401000);  // ip
    w.u32(10);        // pid
    w.u32(11);        // tid
    w.u64(12345);     // time
    w.u64(2);         // callchain nr
    w.u64(0x401000);
    w.u64(0x402000);
    w.u64(PERF_SAMPLE_REGS_ABI_64);
    w.u64(1);
    w.u64(2);
    w.u64(16);  // stack size
    w.u64(0x1111111111111111ULL);
    w.u64(0x2222222222222222ULL);
    w.u64(8);  // dyn size
    const std::vector<uint8_t> body = w.take();
    SampleRecord s;
    std::span<const uint8_t> stack;
    REQUIRE(decode_sample(body, attr, true, &s, &stack));
    CHECK(s.ip == 0x401000);
    CHECK(s.pid == 10);
    CHECK(s.time == 12345);
    CHECK(s.callchain == std::vector<uint64_t>{0x401000, 0x402000});
    CHECK(s.regs == std::vector<uint64_t>{1, 2});
    CHECK(s.stack.size() == 8);
    CHECK(stack.size() == 8);
    CHECK(s.stack_size == 16);
    // Every cut is refused; so is a trailing byte.
    for (size_t cut = 0; cut < body.size(); ++cut) {
      SampleRecord t;
      CHECK_FALSE(
          decode_sample(std::span(body).first(cut), attr, true, &t, &stack));
    }
    std::vector<uint8_t> longer = body;
    longer.push_back(0);
    SampleRecord t;
    CHECK_FALSE(decode_sample(longer, attr, true, &t, &stack));
  }

  TEST_CASE("perf records: a sample's stack copy located, exactly") {
    // The sampler's DWARF layout: identifier, ip, tid, time, cpu, period,
    // an empty callchain, the x86_64 register set, an 8-byte copy.
    perf_event_attr attr{};
    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
                       PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = kX86_64DwarfRegsMask;
    ByteWriter w;
    w.u64(77);        // identifier
    w.u64(0x401000);  // ip
    w.u32(10);        // pid
    w.u32(11);        // tid
    w.u64(12345);     // time
    w.u32(1);         // cpu
    w.u32(0);
    w.u64(1000);  // period
    w.u64(1);     // callchain nr
    w.u64(PERF_CONTEXT_USER);
    w.u64(PERF_SAMPLE_REGS_ABI_64);
    // AX..SS then R8..R15: the stack pointer is the 8th register.
    for (uint64_t i = 0; i < 20; ++i) w.u64(i == 7 ? 0x7ffd0000 : i);
    w.u64(16);  // stack size
    const size_t copy_at = w.size();
    w.u64(0x1111111111111111ULL);
    w.u64(0x2222222222222222ULL);
    w.u64(8);  // dyn size
    const std::vector<uint8_t> body = w.take();
    UserStackLocation where;
    REQUIRE(locate_user_stack(body, attr, &where));
    CHECK(where.pid == 10);
    CHECK(where.tid == 11);
    CHECK(where.time == 12345);
    CHECK(where.sp == 0x7ffd0000);
    CHECK(where.offset == copy_at);
    CHECK(where.size == 16);
    CHECK(where.dyn_size == 8);
    // The same through the attr's precomputed layout.
    const UserStackLayout layout(attr);
    CHECK(layout.has_stack());
    UserStackLocation fast;
    REQUIRE(layout.locate(body, &fast));
    CHECK(fast.pid == where.pid);
    CHECK(fast.tid == where.tid);
    CHECK(fast.time == where.time);
    CHECK(fast.sp == where.sp);
    CHECK(fast.offset == where.offset);
    CHECK(fast.size == where.size);
    CHECK(fast.dyn_size == where.dyn_size);
    uint32_t pid = 0, tid = 0;
    uint64_t time = 0;
    REQUIRE(layout.head(std::span(body).first(layout.head_size()), &pid, &tid,
                        &time));
    CHECK(pid == 10);
    CHECK(tid == 11);
    CHECK(time == 12345);
    CHECK_FALSE(layout.head(std::span(body).first(layout.head_size() - 1), &pid,
                            &tid, &time));
    // Every cut and a trailing byte are refused.
    for (size_t cut = 0; cut < body.size(); ++cut) {
      UserStackLocation t;
      CHECK_FALSE(locate_user_stack(std::span(body).first(cut), attr, &t));
      CHECK_FALSE(layout.locate(std::span(body).first(cut), &t));
    }
    std::vector<uint8_t> longer = body;
    longer.push_back(0);
    CHECK_FALSE(locate_user_stack(longer, attr, &where));
    CHECK_FALSE(layout.locate(longer, &where));
    // Counts that point past the end: a callchain, a copy size.
    std::vector<uint8_t> huge = body;
    for (size_t at : {size_t{48}, copy_at - 8}) {
      huge = body;
      for (size_t i = 0; i < 8; ++i) huge[at + i] = 0xff;
      CHECK_FALSE(locate_user_stack(huge, attr, &where));
      CHECK_FALSE(layout.locate(huge, &where));
    }
    // A layout with a variable field (RAW) is walked, with the same result.
    perf_event_attr raw = attr;
    raw.sample_type |= PERF_SAMPLE_RAW;
    std::vector<uint8_t> with_raw(body.begin(), body.begin() + 64);
    const std::vector<uint8_t> raw_field = {4, 0, 0, 0, 1, 2, 3, 4};
    with_raw.insert(with_raw.end(), raw_field.begin(), raw_field.end());
    with_raw.insert(with_raw.end(), body.begin() + 64, body.end());
    REQUIRE(UserStackLayout(raw).locate(with_raw, &fast));
    CHECK(fast.sp == 0x7ffd0000);
    CHECK(fast.offset == copy_at + 8);
    // Without the stack pointer among the registers, the copy is found but
    // not where it came from.
    perf_event_attr no_sp = attr;
    no_sp.sample_regs_user = kX86_64DwarfRegsMask & ~(1ULL << kX86_64RegSp);
    std::vector<uint8_t> shorter = body;
    shorter.erase(shorter.begin() + 72 + 7 * 8, shorter.begin() + 72 + 8 * 8);
    REQUIRE(locate_user_stack(shorter, no_sp, &where));
    CHECK_FALSE(where.sp);
    CHECK(where.offset == copy_at - 8);
    REQUIRE(UserStackLayout(no_sp).locate(shorter, &where));
    CHECK_FALSE(where.sp);
    // No stack copy in the layout (frame-pointer mode): nothing to locate.
    perf_event_attr fp = attr;
    fp.sample_type &= ~uint64_t{PERF_SAMPLE_STACK_USER};
    CHECK_FALSE(locate_user_stack(body, fp, &where));
  }

  TEST_CASE("perf records: mmap2, comm, task and lost bodies") {
    ByteWriter w;
    w.u32(5);
    w.u32(6);
    w.u64(0x10000);
    w.u64(0x2000);
    w.u64(0);
    w.u32(8);
    w.u32(1);
    w.u64(42);
    w.u64(0);
    w.u32(5);  // PROT_READ | PROT_EXEC
    w.u32(2);
    w.bytes(std::string_view("/lib/x.so"));
    w.zeros(7);
    std::vector<uint8_t> mmap = w.take();
    Mmap2Record m;
    REQUIRE(decode_mmap(PERF_RECORD_MMAP2, 0, mmap, &m));
    CHECK(m.pid == 5);
    CHECK(m.ino == 42);
    CHECK(m.filename == "/lib/x.so");
    CHECK_FALSE(
        decode_mmap(PERF_RECORD_MMAP2, 0, std::span(mmap).first(60), &m));

    ByteWriter c;
    c.u32(5);
    c.u32(5);
    c.bytes(std::string_view("bench"));
    c.zeros(3);
    CommRecord comm;
    REQUIRE(decode_comm(PERF_RECORD_MISC_COMM_EXEC, c.view(), &comm));
    CHECK(comm.comm == "bench");
    CHECK(comm.exec);

    ByteWriter t;
    for (uint32_t v : {1u, 2u, 3u, 4u}) t.u32(v);
    t.u64(99);
    TaskRecord task;
    REQUIRE(decode_task(PERF_RECORD_EXIT, t.view(), &task));
    CHECK(task.is_exit);
    CHECK(task.ptid == 4);
    CHECK(task.time == 99);
    CHECK_FALSE(
        decode_task(PERF_RECORD_FORK, std::span(t.view()).first(20), &task));
    LostRecord lost;
    CHECK_FALSE(decode_lost(std::span(t.view()).first(15), &lost));
  }
}

}  // namespace
}  // namespace runner::format::perf
