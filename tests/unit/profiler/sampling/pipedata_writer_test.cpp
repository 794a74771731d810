#include "profiler/pipedata_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "format/format.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::profiler {

TEST_SUITE("profiler") {
  TEST_CASE("FeatureBuilder strings are length-prefixed and padded to 8") {
    FeatureBuilder builder;
    builder.add_string("x86_64");
    const auto& bytes = builder.bytes();
    REQUIRE(bytes.size() == 4 + 8);
    uint32_t len = 0;
    std::memcpy(&len, bytes.data(), 4);
    CHECK(len == 8);
    CHECK(std::string(reinterpret_cast<const char*>(bytes.data() + 4)) ==
          "x86_64");
    FeatureBuilder exact;
    exact.add_string("1234567");  // 7 + NUL = 8
    CHECK(exact.bytes().size() == 12);
    FeatureBuilder longer;
    longer.add_string("12345678");  // 8 + NUL -> 16
    CHECK(longer.bytes().size() == 20);
    longer.align();
    CHECK(longer.bytes().size() == 24);
  }

  TEST_CASE("PipedataWriter layout: pipe header, attr with ids, feature") {
    runner::testing::TempDir dir;
    auto writer = PipedataWriter::create(dir.file("out"), 64);
    REQUIRE(writer);
    writer->write_pipe_header();
    perf_event_attr attr{};
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = 64;  // overridden: perf 6.1 needs 128
    const uint64_t ids[] = {7, 9};
    writer->write_attr(attr, ids);
    FeatureBuilder nr;
    nr.add_u32(2).add_u32(2);
    writer->write_feature(format::perf::kFeatNrCpus, nr.bytes());
    writer->write_finished_round();
    // Larger than the 64-byte buffer: written straight through.
    std::string big(200, 'x');
    writer->write_bytes(big.data(), big.size());
    REQUIRE(writer->close());
    auto data = base::read_file(dir.file("out"));
    REQUIRE(data);
    const size_t attr_record = 8 + format::perf::kAttrSize + 16;
    REQUIRE(data->size() == 16 + attr_record + 24 + 8 + 200);
    CHECK(writer->bytes_written() == data->size());
    CHECK(data->compare(0, 8, "PERFILE2") == 0);
    uint64_t header_size = 0;
    std::memcpy(&header_size, data->data() + 8, 8);
    CHECK(header_size == 16);
    perf_event_header header{};
    std::memcpy(&header, data->data() + 16, sizeof(header));
    CHECK(header.type == format::perf::kHeaderAttr);
    CHECK(header.size == attr_record);
    perf_event_attr read_back{};
    std::memcpy(&read_back, data->data() + 24, format::perf::kAttrSize);
    CHECK(read_back.size == format::perf::kAttrSize);
    uint64_t id1 = 0;
    std::memcpy(&id1, data->data() + 24 + format::perf::kAttrSize + 8, 8);
    CHECK(id1 == 9);
    std::memcpy(&header, data->data() + 16 + attr_record, sizeof(header));
    CHECK(header.type == format::perf::kHeaderFeature);
    CHECK(header.size == 24);
    uint64_t feat = 0;
    std::memcpy(&feat, data->data() + 16 + attr_record + 8, 8);
    CHECK(feat == format::perf::kFeatNrCpus);
    std::memcpy(&header, data->data() + 16 + attr_record + 24, sizeof(header));
    CHECK(header.type == format::perf::kFinishedRound);
    CHECK(header.size == 8);
  }

  TEST_CASE("PipedataWriter keeps the first write error and drops the rest") {
    base::UniqueFd full(::open("/dev/full", O_WRONLY | O_CLOEXEC));
    REQUIRE(full);
    auto writer = PipedataWriter::from_fd(std::move(full), "/dev/full", 16);
    REQUIRE(writer);
    std::string chunk(40, 'y');
    writer->write_bytes(chunk.data(), chunk.size());
    CHECK(writer->failed());
    CHECK(writer->error().find("No space left") != std::string::npos);
    writer->write_bytes(chunk.data(), 8);
    writer->flush();
    CHECK(writer->bytes_dropped() == 48);
    CHECK(writer->bytes_written() == 0);
    auto closed = writer->close();
    CHECK_FALSE(closed);
    CHECK(closed.error().message().find("No space left") != std::string::npos);
  }

  TEST_CASE("PipedataWriter reserves a file's blocks ahead, frees the rest") {
    runner::testing::TempDir dir;
    {
      // Whether this filesystem reserves blocks at all.
      base::UniqueFd probe(::open(dir.file("probe").c_str(),
                                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                                  0600));
      REQUIRE(probe);
      if (::fallocate(probe.get(), FALLOC_FL_KEEP_SIZE, 0, 1 << 20) != 0)
        RUNNER_SKIP_CASE(std::string("no fallocate on this filesystem: ") +
                         std::strerror(errno));
    }
    auto blocks_of = [](const std::string& path) {
      struct stat st {};
      REQUIRE(::stat(path.c_str(), &st) == 0);
      return std::pair<uint64_t, uint64_t>(
          static_cast<uint64_t>(st.st_size),
          static_cast<uint64_t>(st.st_blocks) * 512);
    };
    // A file that already holds bytes (as append() finds it) keeps them.
    const std::string path = dir.file("out");
    const std::string before(1000, 'a');
    REQUIRE(base::write_file_atomic(path, before));
    auto writer = PipedataWriter::append(path);
    REQUIRE(writer);
    std::vector<uint8_t> run(256 << 10);
    for (size_t i = 0; i < run.size(); ++i)
      run[i] = static_cast<uint8_t>(i * 7);
    writer->write_records(run, {});
    // Written straight through: the size is what was written, and blocks
    // are held beyond it.
    auto [size, held] = blocks_of(path);
    CHECK(size == before.size() + run.size());
    CHECK(held >= size + PipedataWriter::kMinReserve);
    writer->write_records(run, {});
    REQUIRE(writer->close());
    std::tie(size, held) = blocks_of(path);
    CHECK(size == before.size() + 2 * run.size());
    CHECK(held < size + (64 << 10));  // no more than a block's rounding
    auto contents = base::read_file(path);
    REQUIRE(contents);
    REQUIRE(contents->size() == size);
    CHECK(contents->compare(0, before.size(), before) == 0);
    CHECK(std::memcmp(contents->data() + before.size(), run.data(),
                      run.size()) == 0);
    CHECK(std::memcmp(contents->data() + before.size() + run.size(), run.data(),
                      run.size()) == 0);
  }

  TEST_CASE("PipedataWriter::create reports the path") {
    auto writer = PipedataWriter::create("/nonexistent-dir/x");
    REQUIRE_FALSE(writer);
    CHECK(writer.error().what().find("/nonexistent-dir/x") !=
          std::string::npos);
    CHECK(writer.error().code() == ENOENT);
  }

}  // TEST_SUITE
}  // namespace runner::profiler
