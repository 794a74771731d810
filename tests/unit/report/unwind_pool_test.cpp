// UnwindPool: batches unwound on worker threads come back in the order they
// were submitted, each stack as one thread alone unwinds it (the golden
// corpus's real DWARF samples), also past kMaxInFlight batches.
#include "report/unwind_pool.hpp"

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "format/format.hpp"
#include "perfdata/perfdata.hpp"
#include "report/profile_folder.hpp"
#include "report/unwinder.hpp"

namespace {

using runner::perfdata::PipedataReader;
using runner::perfdata::Record;
using runner::perfdata::RecordKind;
using runner::report::ProfileFolder;
using runner::report::UnwindBatch;
using runner::report::UnwindJob;
using runner::report::UnwindPool;
using runner::report::UnwoundStack;

const std::string kGolden = RUNNER_GOLDEN_DIR;

// Every sample of a folder's perf.pipedata, its stack copied into the
// sample (SampleRecord::stack).
std::vector<runner::perfdata::SampleRecord> samples_of(
    const std::string& folder) {
  std::vector<runner::perfdata::SampleRecord> samples;
  auto reader =
      PipedataReader::open(runner::format::ProfileLayout(folder).pipedata());
  REQUIRE(reader);
  while (true) {
    auto next = reader->next();
    if (!next || !*next) break;
    if ((*next)->kind == RecordKind::kSample)
      samples.push_back(std::move((*next)->sample));
  }
  return samples;
}

bool same(const UnwoundStack& a, const UnwoundStack& b) {
  return a.addrs == b.addrs && a.end == b.end &&
         a.interrupted == b.interrupted && a.frame_pointer == b.frame_pointer;
}

// Fills batches of `per_batch` jobs on a producer thread and checks, in the
// order taken back, each result against `expected`.
size_t check_pool(ProfileFolder& folder,
                  const std::vector<runner::perfdata::SampleRecord>& samples,
                  const std::vector<UnwoundStack>& expected, size_t per_batch,
                  unsigned workers) {
  UnwindPool pool(folder, workers);
  std::thread producer([&] {
    for (size_t i = 0; i < samples.size();) {
      std::unique_ptr<UnwindBatch> batch = pool.make_batch();
      for (; batch->job_count < per_batch && i < samples.size(); ++i) {
        if (batch->job_count == batch->jobs.size()) batch->jobs.emplace_back();
        UnwindJob& job = batch->jobs[batch->job_count++];
        job.sample = samples[i];
        job.stack_copy = samples[i].stack;
        job.stack = job.stack_copy;
      }
      pool.submit(std::move(batch));
    }
    pool.close();
  });
  size_t checked = 0, mismatches = 0;
  while (std::unique_ptr<UnwindBatch> batch = pool.take()) {
    CHECK(batch->done);
    for (size_t j = 0; j < batch->job_count; ++j, ++checked)
      mismatches += !same(batch->jobs[j].result, expected.at(checked));
    pool.recycle(std::move(batch));
  }
  producer.join();
  CHECK(mismatches == 0);
  return checked;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE(
      "unwind pool: every golden folder's samples come back in order, "
      "unwound as by one thread, with batches of 1, 3 and 64") {
    size_t folders = 0, total = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(kGolden + "/folders")) {
      const std::string path = entry.path().string();
      CAPTURE(path);
      auto samples = samples_of(path);
      auto folder = ProfileFolder::open(path);
      REQUIRE(folder);
      runner::report::Unwinder alone(*folder);
      std::vector<UnwoundStack> expected;
      for (const auto& s : samples)
        expected.push_back(alone.unwind(s, s.stack));
      for (size_t per_batch : {1, 3, 64}) {
        // Batches of 1 put far more than kMaxInFlight through the pool.
        const size_t checked =
            check_pool(*folder, samples, expected, per_batch, 3);
        CHECK(checked == samples.size());
        total += checked;
      }
      ++folders;
    }
    CHECK(folders >= 5);
    CHECK(total > 3 * UnwindPool::kMaxInFlight);
  }

  TEST_CASE("unwind pool: closed with nothing submitted, take() ends") {
    auto folder = ProfileFolder::open(kGolden + "/folders/dwarf");
    REQUIRE(folder);
    UnwindPool pool(*folder, 2);
    pool.close();
    CHECK(pool.take() == nullptr);
  }
}
