// PERF_RECORD_COMPRESSED (perf record -z, runner --compress): what
// PipedataWriter compresses, PipedataReader reads back identically, records
// split across two COMPRESSED records included; broken compressed streams
// (corrupt, truncated, decoding to too much, no HEADER_COMPRESSED) are
// Errors naming the offset, never a crash or a hang.
#include <zstd.h>

#include <cstring>
#include <set>
#include <sstream>

#include <doctest/doctest.h>

#include "perfdata/perfdata.hpp"
#include "perfdata/record_inflater.hpp"
#include "profiler/pipedata_writer.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/unit/perfdata/reading_test_util.hpp"

using namespace runner::perfdata;
using namespace runner::perfdata::testing;
using runner::profiler::PipedataWriter;
namespace pf = runner::format::perf;

namespace {

constexpr uint64_t kId = 42;

perf_event_attr sample_attr() {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  a.size = sizeof(a);
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                  PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
  a.sample_id_all = 1;
  return a;
}

// A sample of sample_attr() whose size varies with i (its call chain).
Bytes sample(uint64_t i) {
  Bytes b;
  b.u64(kId).u64(0x400000 + i * 16).u32(100).u32(101 + i % 3).u64(1000 + i);
  b.u64(1000003);  // PERIOD comes before CALLCHAIN
  const uint64_t depth = i % 13;
  b.u64(depth);
  for (uint64_t d = 0; d < depth; ++d) b.u64(0x500000 + d * 64 + i % 7);
  return record(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, b);
}

// PERF_RECORD_TEXT_POKE is delivered raw: a large record of `size` bytes.
Bytes big_record(size_t size, uint8_t fill) {
  Bytes b;
  b.u64(0xffffffff81000000).u16(0).u16(0).zeros(4);
  while (b.size() + 8 < size) b.u8(static_cast<uint8_t>(fill + b.size() % 5));
  return record(PERF_RECORD_TEXT_POKE, 0, b);
}

Bytes feature(const pf::CompressedFeature& f) {
  Bytes b;
  b.u64(pf::kFeatCompressed);
  const auto payload = pf::encode_compressed_feature(f);
  b.raw(payload.data(), payload.size());
  return record(pf::kHeaderFeature, 0, b);
}

Bytes file_start() {
  Bytes f = pipe_header();
  f.append(attr_record(sample_attr(), {kId}));
  return f;
}

// One zstd stream over `data`, flushed at each of `cuts` (and at the end):
// the payload of each segment.
std::vector<std::vector<uint8_t>> zstd_segments(
    const std::vector<uint8_t>& data, const std::vector<size_t>& cuts) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  REQUIRE(cctx != nullptr);
  std::vector<std::vector<uint8_t>> out;
  size_t from = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(data.size());
  for (size_t to : ends) {
    std::vector<uint8_t> seg(ZSTD_compressBound(to - from) + 64);
    ZSTD_inBuffer in{data.data() + from, to - from, 0};
    ZSTD_outBuffer o{seg.data(), seg.size(), 0};
    size_t left = 0;
    do {
      left = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_flush);
      REQUIRE_FALSE(ZSTD_isError(left));
    } while (left != 0);
    seg.resize(o.pos);
    out.push_back(std::move(seg));
    from = to;
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

Bytes compressed(const std::vector<uint8_t>& payload) {
  Bytes b;
  b.raw(payload.data(), payload.size());
  return record(pf::kCompressed, 0, b);
}

// What a record says, for comparing two readings.
std::string describe(const Record& r) {
  std::ostringstream s;
  s << r.type << '/' << r.misc << ':';
  if (r.kind == RecordKind::kSample) {
    const SampleRecord& x = r.sample;
    s << x.id << ',' << x.ip << ',' << x.pid << ',' << x.tid << ',' << x.time
      << ',' << x.period;
    for (uint64_t ip : x.callchain) s << ',' << ip;
  } else {
    for (uint8_t byte : r.raw) s << static_cast<int>(byte) << ' ';
  }
  return s.str();
}

std::vector<std::string> describe_all(const ReadAll& all) {
  std::vector<std::string> out;
  for (const Record& r : all.records)
    if (r.kind != RecordKind::kFeature) out.push_back(describe(r));
  return out;
}

// The test's kernel records: `n` samples, with large records among them.
std::vector<Bytes> kernel_records(size_t n) {
  std::vector<Bytes> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(sample(i));
    if (i % 997 == 0) out.push_back(big_record(60000 - i % 5000, 3));
  }
  return out;
}

// perf.pipedata as the Sampler writes it: batches of records (each given to
// write_records in two pieces, cut inside a record as a ring buffer's wrap
// does), a FINISHED_ROUND after each batch; one batch is larger than a
// compression segment.
struct Written {
  uint64_t record_bytes = 0, compressed_bytes = 0;
  std::vector<uint64_t> boundaries;    // cumulative record ends
  std::vector<uint64_t> batch_starts;  // where each write_records began
};
Written write_file(const std::string& path, int level,
                   const std::vector<Bytes>& records) {
  auto writer = PipedataWriter::create(path);
  REQUIRE(writer);
  writer->write_pipe_header();
  const perf_event_attr attr = sample_attr();
  const uint64_t ids[] = {kId};
  writer->write_attr(attr, ids);
  if (level > 0) REQUIRE(writer->enable_compression(level));
  Written out;
  const size_t batches[] = {50, 9000, 1, 300, 2000};
  size_t next = 0;
  for (size_t batch : batches) {
    out.batch_starts.push_back(out.record_bytes);
    std::vector<uint8_t> bytes;
    for (size_t i = 0; i < batch && next < records.size(); ++i, ++next) {
      const auto& r = records[next].data();
      bytes.insert(bytes.end(), r.begin(), r.end());
      out.boundaries.push_back(out.record_bytes + bytes.size());
    }
    out.record_bytes += bytes.size();
    const size_t cut = bytes.size() / 3 + 5;
    std::span<const uint8_t> all(bytes);
    writer->write_records(all.first(std::min(cut, all.size())),
                          all.subspan(std::min(cut, all.size())));
    writer->write_finished_round();
  }
  CHECK(writer->uncompressed_bytes() == (level > 0 ? out.record_bytes : 0));
  out.compressed_bytes = writer->compressed_bytes();
  REQUIRE(writer->close());
  return out;
}

// Offset of the HEADER_COMPRESSED payload in a written file.
size_t compressed_feature_offset(const std::vector<uint8_t>& file) {
  size_t off = pf::kPipeHeaderSize;
  while (off + 16 <= file.size()) {
    perf_event_header h;
    std::memcpy(&h, file.data() + off, sizeof(h));
    if (h.size < 8) break;
    uint64_t feat = 0;
    std::memcpy(&feat, file.data() + off + 8, 8);
    if (h.type == pf::kHeaderFeature && feat == pf::kFeatCompressed)
      return off + 16;
    off += h.size;
  }
  FAIL("no HEADER_COMPRESSED");
  return 0;
}

}  // namespace

TEST_SUITE("perfdata") {
  TEST_CASE("compressed pipedata reads back the records written uncompressed") {
    runner::testing::TempDir dir;
    const std::vector<Bytes> records = kernel_records(11000);
    const Written plain = write_file(dir.file("plain"), 0, records);
    const Written packed = write_file(dir.file("packed"), 3, records);
    CHECK(packed.record_bytes == plain.record_bytes);
    CHECK(packed.compressed_bytes > 0);
    CHECK(packed.compressed_bytes < plain.record_bytes / 2);

    ReadAll a = read_all(dir.file("plain"));
    ReadAll b = read_all(dir.file("packed"));
    INFO(b.error);
    REQUIRE(a.clean_eof);
    REQUIRE(b.clean_eof);
    CHECK(a.stats.compressed_records == 0);
    CHECK(a.stats.malformed_records == 0);
    CHECK(b.stats.compressed_records >= 2);
    CHECK(b.stats.decompressed_bytes == packed.record_bytes);
    CHECK(b.stats.undecoded_compressed_bytes == 0);
    CHECK(b.stats.malformed_records == 0);
    CHECK(b.stats.samples == 11000);
    CHECK(describe_all(a) == describe_all(b));
    CHECK(b.stats.bytes < a.stats.bytes / 2);
    // The 9000-record batch goes past a segment, which ends inside a record:
    // that record is split across two COMPRESSED records.
    const std::set<uint64_t> ends(packed.boundaries.begin(),
                                  packed.boundaries.end());
    const uint64_t cut =
        packed.batch_starts[1] + PipedataWriter::kCompressSegment;
    REQUIRE(cut < packed.batch_starts[2]);
    CHECK(ends.count(cut) == 0);
  }

  TEST_CASE(
      "compressed pipedata: no COMPRESSED record decodes to more than "
      "a segment") {
    runner::testing::TempDir dir;
    write_file(dir.file("packed"), 1, kernel_records(11000));
    auto file = runner::base::read_file(dir.file("packed"));
    REQUIRE(file);
    std::vector<uint8_t> bytes(file->begin(), file->end());
    // mmap_len is the 5th u32: advertise the segment, not twice it.
    const size_t at = compressed_feature_offset(bytes) + 16;
    const uint32_t segment = PipedataWriter::kCompressSegment;
    uint32_t advertised = 0;
    std::memcpy(&advertised, bytes.data() + at, 4);
    CHECK(advertised == PipedataWriter::kCompressedMmapLen);
    std::memcpy(bytes.data() + at, &segment, 4);
    write_bytes(dir.file("tight"), bytes);
    ReadAll r = read_all(dir.file("tight"));
    INFO(r.error);
    CHECK(r.clean_eof);
    CHECK(r.stats.samples == 11000);
  }

  TEST_CASE(
      "compressed records: a record split across two is delivered "
      "whole, in file order") {
    runner::testing::TempDir dir;
    Bytes inner;
    inner.append(sample(1)).append(sample(2)).append(sample(3));
    const size_t r1 = sample(1).size(), r2 = sample(2).size();
    // Cut 5 bytes into the second sample.
    auto segs = zstd_segments(inner.data(), {r1 + 5});
    REQUIRE(segs.size() == 2);
    pf::CompressedFeature f;
    f.mmap_len = 4096;
    Bytes file = file_start();
    file.append(feature(f));
    file.append(compressed(segs[0]));
    file.append(record(pf::kFinishedRound, 0, Bytes()));
    file.append(compressed(segs[1]));
    write_bytes(dir.file("f"), file.data());
    ReadAll r = read_all(dir.file("f"));
    INFO(r.error);
    REQUIRE(r.clean_eof);
    std::vector<std::string> got;
    for (const Record& rec : r.records)
      if (rec.kind == RecordKind::kSample)
        got.push_back("S" + std::to_string(rec.sample.time));
      else if (rec.kind == RecordKind::kFinishedRound)
        got.push_back("R");
    const std::vector<std::string> expected = {"S1001", "R", "S1002", "S1003"};
    CHECK(got == expected);
    CHECK(r.stats.compressed_records == 2);
    CHECK(r.stats.decompressed_bytes == inner.size());
    CHECK(r2 > 5);

    SUBCASE("the file ends before the rest of the split record") {
      Bytes cut = file_start();
      cut.append(feature(f));
      cut.append(compressed(segs[0]));
      write_bytes(dir.file("cut"), cut.data());
      ReadAll c = read_all(dir.file("cut"));
      CHECK(c.records.size() == 3);  // attr, feature, first sample
      CHECK(c.error.find("compressed data ends inside a record") !=
            std::string::npos);
      CHECK(c.stats.undecoded_compressed_bytes == 5);
    }
  }

  TEST_CASE("compressed records: broken streams are clear errors") {
    runner::testing::TempDir dir;
    Bytes inner;
    for (uint64_t i = 0; i < 50; ++i) inner.append(sample(i));
    auto segs = zstd_segments(inner.data(), {});
    pf::CompressedFeature f;
    f.mmap_len = 1 << 16;
    const size_t feature_end = file_start().size() + feature(f).size();
    auto read_with = [&](const Bytes& head, const std::vector<uint8_t>& p) {
      Bytes file = head;
      file.append(compressed(p));
      write_bytes(dir.file("f"), file.data());
      return read_all(dir.file("f"), 1000);
    };
    Bytes with_feature = file_start();
    with_feature.append(feature(f));

    SUBCASE("no HEADER_COMPRESSED before it") {
      ReadAll r = read_with(file_start(), segs[0]);
      CHECK(r.error.find("no HEADER_COMPRESSED feature") != std::string::npos);
      CHECK(r.error.find("offset " + std::to_string(file_start().size())) !=
            std::string::npos);
    }
    SUBCASE("another compression type") {
      pf::CompressedFeature other = f;
      other.type = 2;
      Bytes head = file_start();
      head.append(feature(other));
      ReadAll r = read_with(head, segs[0]);
      CHECK(r.error.find("is not zstd") != std::string::npos);
    }
    SUBCASE("an absurd mmap_len") {
      for (uint32_t len : {0u, 0xffffffffu}) {
        pf::CompressedFeature other = f;
        other.mmap_len = len;
        Bytes head = file_start();
        head.append(feature(other));
        ReadAll r = read_with(head, segs[0]);
        CHECK(r.error.find("mmap_len") != std::string::npos);
      }
    }
    SUBCASE("garbage instead of zstd") {
      std::vector<uint8_t> junk(300, 0xa5);
      ReadAll r = read_with(with_feature, junk);
      CHECK(r.error.find("corrupt zstd data") != std::string::npos);
      CHECK(r.error.find("offset " + std::to_string(feature_end)) !=
            std::string::npos);
      CHECK(r.stats.undecoded_compressed_bytes == junk.size());
    }
    SUBCASE("every byte of the payload flipped") {
      for (size_t i = 0; i < segs[0].size(); ++i) {
        std::vector<uint8_t> p = segs[0];
        p[i] ^= 0x5a;
        ReadAll r = read_with(with_feature, p);
        // Decoded (no checksum: maybe other records) or an Error.
        CHECK(r.clean_eof != !r.error.empty());
      }
    }
    SUBCASE("a bomb: more output than mmap_len") {
      Bytes many;
      for (int i = 0; i < 20000; ++i) many.append(sample(5));
      auto bomb = zstd_segments(many.data(), {});
      REQUIRE(bomb[0].size() < pf::kMaxCompressedPayload);
      ReadAll r = read_with(with_feature, bomb[0]);
      CHECK(r.error.find("decodes to more than the 65536 bytes") !=
            std::string::npos);
      CHECK(r.records.size() == 2);  // attr, feature: nothing decoded
    }
  }

  TEST_CASE("compressed records: a decompression bomb stops at the budget") {
    runner::testing::TempDir dir;
    // `mib` MiB of one sample repeated (a few KiB of zstd: ~10,000:1), one
    // COMPRESSED record per MiB: the file, and each record's offset.
    const Bytes one = sample(5);
    const auto bomb_file = [&](const std::string& path, size_t mib,
                               std::vector<size_t>* offsets) {
      std::vector<uint8_t> many;
      for (size_t i = 0; i < (mib << 20) / one.size(); ++i)
        many.insert(many.end(), one.data().begin(), one.data().end());
      std::vector<size_t> cuts;
      for (size_t at = 1 << 20; at < many.size(); at += 1 << 20)
        cuts.push_back(at);
      pf::CompressedFeature f;
      f.mmap_len = RecordInflater::kMaxMmapLen;
      Bytes file = file_start();
      file.append(feature(f));
      uint64_t packed = 0;
      for (const auto& segment : zstd_segments(many, cuts)) {
        REQUIRE(segment.size() < pf::kMaxCompressedPayload);
        offsets->push_back(file.size());
        packed += segment.size();
        file.append(compressed(segment));
      }
      // The floor is the budget for such a file.
      REQUIRE(packed * RecordInflater::kMaxRatio <
              RecordInflater::kBudgetFloor);
      write_bytes(path, file.data());
    };
    struct Read {
      uint64_t samples = 0;
      std::string error;
      ReaderStats stats;
    };
    const auto read = [](const std::string& path) {
      auto reader = PipedataReader::open(path);
      REQUIRE(reader);
      Read out;
      Record record;
      for (;;) {
        auto next = reader->next_into(record, false);
        if (!next) out.error = next.error().what();
        if (!next || !*next) break;
        out.samples += record.kind == RecordKind::kSample;
      }
      out.stats = reader->stats();
      return out;
    };

    SUBCASE("80 MiB from a few KiB: an error at the record past 64 MiB") {
      std::vector<size_t> offsets;
      bomb_file(dir.file("bomb"), 80, &offsets);
      const Read r = read(dir.file("bomb"));
      // The 65th MiB goes past the budget (64 MiB and a page): its record
      // is named, and every record decoded before it was delivered.
      REQUIRE(offsets.size() == 80);
      CHECK(r.error.find("record at offset " + std::to_string(offsets[64]) +
                         ": decodes past the budget of " +
                         std::to_string(RecordInflater::kBudgetFloor) +
                         " bytes") != std::string::npos);
      CHECK(r.error.find("decompression bomb") != std::string::npos);
      CHECK(r.samples == (uint64_t{64} << 20) / one.size());
      CHECK(r.stats.decompressed_bytes == uint64_t{64} << 20);
      CHECK(r.stats.undecoded_compressed_bytes > 0);
    }
    SUBCASE("60 MiB from a few KiB: under the floor, read whole") {
      std::vector<size_t> offsets;
      bomb_file(dir.file("small"), 60, &offsets);
      const Read r = read(dir.file("small"));
      CHECK(r.error.empty());
      CHECK(r.samples == (uint64_t{60} << 20) / one.size());
    }
  }

  TEST_CASE("compressed pipedata cut at every byte: an Error or a clean end") {
    runner::testing::TempDir dir;
    std::vector<Bytes> records;
    for (uint64_t i = 0; i < 400; ++i) records.push_back(sample(i));
    write_file(dir.file("packed"), 1, records);
    auto whole = runner::base::read_file(dir.file("packed"));
    REQUIRE(whole);
    ReadAll full = read_all(dir.file("packed"));
    REQUIRE(full.clean_eof);
    const size_t start = compressed_feature_offset(
        std::vector<uint8_t>(whole->begin(), whole->end()));
    for (size_t cut = start; cut < whole->size(); cut += 7) {
      write_bytes(dir.file("cut"),
                  std::vector<uint8_t>(whole->begin(), whole->begin() + cut));
      ReadAll r = read_all(dir.file("cut"), 100000);
      CHECK(r.clean_eof != !r.error.empty());
      REQUIRE(r.records.size() <= full.records.size());
      for (size_t i = 0; i < r.records.size(); ++i)
        CHECK(describe(r.records[i]) == describe(full.records[i]));
    }
  }

  TEST_CASE("PipedataWriter::enable_compression refuses levels out of 1..19") {
    runner::testing::TempDir dir;
    auto writer = PipedataWriter::create(dir.file("f"));
    REQUIRE(writer);
    CHECK_FALSE(writer->enable_compression(0));
    CHECK_FALSE(writer->enable_compression(20));
    CHECK(writer->compression_level() == 0);
    CHECK(writer->enable_compression(19));
    CHECK(writer->compression_level() == 19);
  }
}
