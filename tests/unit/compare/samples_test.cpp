// compare/samples: loading a side from real folders (results JSON and
// ExecutionTimestamps.msgpack written through format), markers assigned to
// their URI, pooling over folders, and the errors.
#include "compare/samples.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

namespace compare = runner::compare;
namespace format = runner::format;
using runner::testing::TempDir;

namespace {

format::BenchmarkResult summary(const std::string& name, double mean,
                                uint64_t rounds, uint64_t iters = 10) {
  format::BenchmarkResult r;
  r.name = name;
  r.uri = "t.cpp::" + name;
  r.stats.mean_ns = r.stats.median_ns = mean;
  r.stats.stdev_ns = 1;
  r.stats.rounds = rounds;
  r.stats.iter_per_round = iters;
  return r;
}

void write_results(const std::string& folder,
                   const std::vector<format::BenchmarkResult>& benchmarks,
                   uint32_t pid = 1) {
  std::filesystem::create_directories(folder + "/results");
  REQUIRE(runner::base::write_file_atomic(
      folder + "/results/" + std::to_string(pid) + ".json",
      format::write_walltime_results({"t", "1", pid}, benchmarks)));
}

// Per URI, rounds of the given durations, then the URI's timestamp.
void write_markers(
    const std::string& folder,
    const std::vector<std::pair<std::string, std::vector<uint64_t>>>& uris,
    const char* start = "RoundStart", const char* end = "RoundEnd") {
  std::filesystem::create_directories(folder);
  format::ExecutionTimestamps ts;
  uint64_t now = 100;
  for (const auto& [uri, durations] : uris) {
    for (uint64_t d : durations) {
      ts.markers.push_back({start, now += 10});
      ts.markers.push_back({end, now += d});
    }
    ts.uri_by_ts.emplace_back(now += 10, uri);
  }
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(folder).execution_timestamps(),
      format::write_execution_timestamps(ts)));
}

const compare::BenchmarkSamples* find(const compare::LoadedSide& side,
                                      const std::string& uri) {
  for (const auto& b : side.benchmarks)
    if (b.uri == uri) return &b;
  return nullptr;
}

}  // namespace

TEST_CASE("samples: pooled summaries equal the summary of all the rounds") {
  std::vector<double> a = {10, 12, 11, 13, 9}, b = {20, 22, 19, 21};
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  auto pooled =
      compare::pool_summaries({compare::summarize(a), compare::summarize(b)});
  auto direct = compare::summarize(all);
  CHECK(pooled.rounds == 9);
  CHECK(pooled.mean_ns == doctest::Approx(direct.mean_ns));
  CHECK(pooled.stdev_ns == doctest::Approx(direct.stdev_ns));
  CHECK(pooled.min_ns == 9);
  CHECK(pooled.max_ns == 22);
  CHECK(compare::summarize(a).median_ns == 11);
  CHECK(compare::summarize(a).stdev_ns == doctest::Approx(std::sqrt(2.5)));
}

TEST_CASE("samples: markers belong to the URI announced after them") {
  TempDir dir;
  write_markers(dir.file("f"),
                {{"m::a", {100, 110, 120}}, {"m::b", {500, 510}}},
                "BenchmarkStart", "BenchmarkEnd");  // the older names
  auto side = compare::load_side("base", {dir.file("f")});
  REQUIRE(side);
  REQUIRE(side->benchmarks.size() == 2);
  const auto* a = find(*side, "m::a");
  const auto* b = find(*side, "m::b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->name == "a");
  CHECK(a->samples.source == format::SampleSource::kMarkers);
  CHECK(a->samples.times_ns == std::vector<double>{100, 110, 120});
  CHECK(b->samples.times_ns == std::vector<double>{500, 510});
  CHECK(a->folder_medians_ns == std::vector<double>{110});
}

TEST_CASE("samples: markers divided by iter_per_round when the counts agree") {
  TempDir dir;
  write_markers(dir.file("f"),
                {{"t.cpp::x", {1000, 2000}}, {"t.cpp::y", {3000, 3000}}});
  write_results(dir.file("f"), {summary("x", 150, 2), summary("y", 300, 5)});
  auto side = compare::load_side("head", {dir.file("f")});
  REQUIRE(side);
  const auto* x = find(*side, "t.cpp::x");
  const auto* y = find(*side, "t.cpp::y");
  REQUIRE(x != nullptr);
  REQUIRE(y != nullptr);
  CHECK(x->samples.source == format::SampleSource::kMarkers);
  CHECK(x->samples.times_ns == std::vector<double>{100, 200});
  // 2 marker rounds, the results say 5: the summary, and a warning.
  CHECK(y->samples.source == format::SampleSource::kSummary);
  REQUIRE(y->samples.summary);
  CHECK(y->samples.summary->rounds == 5);
  REQUIRE(side->warnings.size() == 1);
  CHECK(side->warnings[0].find("t.cpp::y") != std::string::npos);
}

TEST_CASE("samples: one URI in several files and folders pools") {
  TempDir dir;
  write_results(dir.file("a"), {summary("s", 100, 10)}, 1);
  write_results(dir.file("a"), {summary("s", 200, 10)}, 2);
  write_results(dir.file("b"),
                {summary("s", 300, 20), summary("only_b", 5, 6)});
  auto side = compare::load_side("base", {dir.file("a"), dir.file("b")});
  REQUIRE(side);
  const auto* s = find(*side, "t.cpp::s");
  REQUIRE(s != nullptr);
  REQUIRE(s->samples.summary);
  CHECK(s->samples.folders == 2);
  CHECK(s->samples.summary->rounds == 40);
  CHECK(s->samples.summary->mean_ns == doctest::Approx(225));
  CHECK(s->folder_medians_ns.size() == 2);
  CHECK(s->folder_medians_ns[1] == 300);
  const auto* only = find(*side, "t.cpp::only_b");
  REQUIRE(only != nullptr);
  CHECK(only->samples.folders == 1);
}

TEST_CASE("samples: errors name the side, the folder and the cause") {
  TempDir dir;
  auto missing = compare::load_side("base", {dir.file("nope")});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what() ==
        "base folder '" + dir.file("nope") + "': no such directory");

  std::filesystem::create_directories(dir.file("empty/results"));
  auto empty = compare::load_side("head", {dir.file("empty")});
  REQUIRE_FALSE(empty);
  CHECK(empty.error().what().find("no results") != std::string::npos);

  // Only a FIFO named like a results file: not read, and the error says so.
  std::filesystem::create_directories(dir.file("fifo/results"));
  REQUIRE(::mkfifo(dir.file("fifo/results/1.json").c_str(), 0600) == 0);
  auto fifo = compare::load_side("head", {dir.file("fifo")});
  REQUIRE_FALSE(fifo);
  CHECK(fifo.error().what().find("1.json: not a regular file: not read") !=
        std::string::npos);

  REQUIRE(runner::base::write_file_atomic(dir.file("empty/results/3.json"),
                                          std::string_view("[1,")));
  auto broken = compare::load_side("head", {dir.file("empty")});
  REQUIRE_FALSE(broken);
  CHECK(broken.error().what().find("results/3.json") != std::string::npos);

  // A symlinked results file is not read (regular files only).
  write_results(dir.file("linked"), {summary("s", 1, 6)});
  std::filesystem::create_symlink(dir.file("empty/results/3.json"),
                                  dir.file("linked/results/9.json"));
  auto linked = compare::load_side("base", {dir.file("linked")});
  REQUIRE(linked);
  CHECK(linked->benchmarks.size() == 1);
  // ... and said so.
  CHECK(std::count_if(linked->warnings.begin(), linked->warnings.end(),
                      [](const std::string& w) {
                        return w.find("9.json: not a regular file") !=
                               std::string::npos;
                      }) == 1);
}

TEST_CASE(
    "samples: round arrays first; a summary-only folder pools as "
    "summaries") {
  TempDir dir;
  auto rounds = summary("r", 0, 3);
  rounds.times_per_round_ns = {1000, 2400, 3000};
  rounds.iters_per_round = {10, 20, 30};
  write_markers(dir.file("a"), {{rounds.uri, {7, 7, 7}}});  // not used
  write_results(dir.file("a"), {rounds});
  auto side = compare::load_side("base", {dir.file("a")});
  REQUIRE(side);
  const auto* r = find(*side, rounds.uri);
  REQUIRE(r != nullptr);
  CHECK(r->samples.source == format::SampleSource::kRounds);
  CHECK(r->samples.times_ns == std::vector<double>{100, 120, 100});

  write_results(dir.file("b"), {summary("r", 130, 3)});
  auto mixed = compare::load_side("base", {dir.file("a"), dir.file("b")});
  REQUIRE(mixed);
  const auto* m = find(*mixed, rounds.uri);
  REQUIRE(m != nullptr);
  CHECK(m->samples.source == format::SampleSource::kSummary);
  REQUIRE(m->samples.summary);
  CHECK(m->samples.summary->rounds == 6);
  CHECK(m->samples.summary->mean_ns == doctest::Approx((320.0 / 3 + 130) / 2));
  CHECK(m->folder_medians_ns == std::vector<double>{100, 130});
  CHECK_FALSE(mixed->warnings.empty());
}

TEST_CASE("samples: 150,000 URIs and as many rounds, each round its URI's") {
  // A ~10 MB ExecutionTimestamps.msgpack: each round is placed with one
  // binary search among the URIs, not compared with every URI.
  constexpr size_t kUris = 150'000;
  TempDir dir;
  std::vector<std::pair<std::string, std::vector<uint64_t>>> uris;
  for (size_t i = 0; i < kUris; ++i)
    uris.push_back({"q.cpp::b" + std::to_string(i), {100 + i % 7}});
  write_markers(dir.file("f"), uris);
  auto side = compare::load_side("head", {dir.file("f")});
  REQUIRE(side);
  REQUIRE(side->benchmarks.size() == kUris);
  size_t wrong = 0;
  for (size_t i = 0; i < kUris; ++i) {
    const auto& b = side->benchmarks[i];
    const std::vector<double> expected = {static_cast<double>(100 + i % 7)};
    if (b.uri != uris[i].first || b.samples.times_ns != expected) ++wrong;
  }
  CHECK(wrong == 0);
  CHECK(side->warnings.empty());
}

TEST_CASE("samples: a round of no length at a URI's timestamp is its alone") {
  // Rounds [100, 100] and [150, 160]; URIs at 100 and 200 (and a third at
  // 200 again): the first round ends at the first URI, the second round is
  // the second URI's; neither counts twice.
  TempDir dir;
  std::filesystem::create_directories(dir.file("f"));
  format::ExecutionTimestamps ts;
  ts.markers = {{"RoundStart", 100},
                {"RoundEnd", 100},
                {"RoundStart", 150},
                {"RoundEnd", 160}};
  ts.uri_by_ts = {{200, "m::b"}, {100, "m::a"}, {200, "m::c"}};
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(dir.file("f")).execution_timestamps(),
      format::write_execution_timestamps(ts)));
  auto side = compare::load_side("base", {dir.file("f")});
  REQUIRE(side);
  const auto* a = find(*side, "m::a");
  const auto* b = find(*side, "m::b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->samples.times_ns == std::vector<double>{0});
  CHECK(b->samples.times_ns == std::vector<double>{10});
  CHECK(find(*side, "m::c") == nullptr);
}

TEST_CASE("samples: a name that is not UTF-8 does not make the folder unread") {
  TempDir dir;
  write_results(dir.file("f"), {summary("NAME", 5, 6), summary("ok", 7, 6)});
  const std::string path = dir.file("f/results/1.json");
  auto text = runner::base::read_file(path);
  REQUIRE(text);
  for (size_t at; (at = text->find("NAME")) != std::string::npos;)
    text->replace(at, 4, "fib\xff");
  REQUIRE(runner::base::write_file_atomic(path, *text));
  auto side = compare::load_side("head", {dir.file("f")});
  REQUIRE_MESSAGE(side, side.error().what());
  REQUIRE(side->benchmarks.size() == 2);
  CHECK(side->benchmarks[0].name == "fib\xEF\xBF\xBD");
  CHECK(side->benchmarks[0].uri == "t.cpp::fib\xEF\xBF\xBD");
  CHECK(side->benchmarks[1].name == "ok");
}

TEST_CASE("samples: ExecutionTimestamps.msgpack nested 100,000 deep") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("f"));
  const std::string deep = std::string(100'000, '\x91') + '\xc0';
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(dir.file("f")).execution_timestamps(), deep));
  // Alone: no results, and the reason.
  auto alone = compare::load_side("head", {dir.file("f")});
  REQUIRE_FALSE(alone);
  CHECK(alone.error().what().find(
            "ExecutionTimestamps.msgpack is corrupt: nested deeper than 128 "
            "levels: markers not used") != std::string::npos);
  // With results: they are used, the markers are not, and that is said.
  write_results(dir.file("f"), {summary("s", 1, 6)});
  auto side = compare::load_side("head", {dir.file("f")});
  REQUIRE(side);
  CHECK(side->benchmarks.size() == 1);
  REQUIRE(side->warnings.size() == 1);
  CHECK(side->warnings[0].find("nested deeper than 128 levels") !=
        std::string::npos);
}

// ---- runner.counters.json: CPU time per iteration -------------------------

namespace {

// URIs announced at the given times, no markers.
void write_uris(const std::string& folder,
                const std::vector<std::pair<uint64_t, std::string>>& uris) {
  std::filesystem::create_directories(folder);
  format::ExecutionTimestamps ts;
  ts.uri_by_ts = uris;
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(folder).execution_timestamps(),
      format::write_execution_timestamps(ts)));
}

format::CounterWindow window(uint64_t start, uint64_t stop, uint64_t cpu_ns) {
  format::CounterWindow w;
  w.start_ns = start;
  w.stop_ns = stop;
  w.task_clock = format::CounterDelta{cpu_ns, stop - start, stop - start};
  return w;
}

void write_counters(const std::string& folder,
                    const std::vector<format::CounterWindow>& windows,
                    uint64_t lost = 0) {
  format::RunCounters c;
  c.counters = {{"task-clock", true, false, ""},
                {"instructions", false, false, "no hardware PMU here"},
                {"cycles", false, false, "no hardware PMU here"}};
  c.windows = windows;
  c.lost_windows = lost;
  if (lost > 0) c.lost_reason = "read failed";
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(folder).run_counters(),
      format::write_run_counters(c)));
}

// A benchmark with round arrays: `rounds` rounds of `iters` iterations of
// `round_ns` each.
format::BenchmarkResult rounds_result(const std::string& name, size_t rounds,
                                      uint64_t iters, uint64_t round_ns) {
  format::BenchmarkResult r =
      summary(name, double(round_ns) / iters, rounds, iters);
  r.times_per_round_ns.assign(rounds, round_ns);
  r.iters_per_round.assign(rounds, iters);
  return r;
}

// Folders each with one benchmark `name` of 4 rounds x 10 iterations of
// 1 ms, announced at `announced_ns`; no counters yet.
void write_folders(const std::vector<std::string>& folders,
                   const std::string& name, uint64_t announced_ns) {
  for (const auto& f : folders) {
    write_results(f, {rounds_result(name, 4, 10, 1'000'000)});
    write_uris(f, {{announced_ns, "t.cpp::" + name}});
  }
}

// `folder` with one benchmark `a` of 2 rounds x 50 iterations; the
// window to write for it, whose instructions were counted half of it.
format::CounterWindow multiplexed_folder(const std::string& folder) {
  write_results(folder, {rounds_result("a", 2, 50, 1'000'000)});
  write_uris(folder, {{10'000'000, "t.cpp::a"}});
  auto w = window(1'000'000, 3'000'000, 2'000'000);
  w.instructions = format::CounterDelta{5'000'000, 2'000'000, 1'000'000};
  return w;
}

bool has_warning(const compare::LoadedSide& side, const std::string& part) {
  return std::any_of(
      side.counter_warnings.begin(), side.counter_warnings.end(),
      [&](const auto& w) { return w.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("samples: each window's task-clock goes to the URI announced next") {
  TempDir dir;
  const std::string f = dir.file("a");
  // a: 4 rounds x 10 iterations of 1 ms; b: 2 rounds x 5 of 2 ms.
  write_results(f, {rounds_result("a", 4, 10, 1'000'000),
                    rounds_result("b", 2, 5, 2'000'000)});
  write_uris(f, {{10'000'000, "t.cpp::a"}, {30'000'000, "t.cpp::b"}});
  // a's window (4 ms of rounds in 4.1 ms), then b's, in two windows; a
  // window after the last URI belongs to none.
  write_counters(f, {window(5'000'000, 9'100'000, 8'000'000),
                     window(11'000'000, 13'000'000, 1'000'000),
                     window(14'000'000, 16'100'000, 3'000'000),
                     window(40'000'000, 41'000'000, 99)});
  auto side = compare::load_side("head", {f});
  REQUIRE_MESSAGE(side, side.error().what());
  const auto* a = find(*side, "t.cpp::a");
  const auto* b = find(*side, "t.cpp::b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(a->folder_counters.size() == a->folder_medians_ns.size());
  const compare::FolderCounters& ca = a->folder_counters[0];
  CHECK(ca.counters_file);
  CHECK(ca.windows == 1);
  CHECK(ca.iterations == 40);
  CHECK(ca.warmup_iterations == 0);
  REQUIRE(ca.cpu_ns_per_iter);
  CHECK(*ca.cpu_ns_per_iter == doctest::Approx(8'000'000.0 / 40));
  CHECK_FALSE(ca.instructions_per_iter);
  const compare::FolderCounters& cb = b->folder_counters[0];
  CHECK(cb.windows == 2);
  CHECK(cb.task_clock_ns == 4'000'000);
  REQUIRE(cb.cpu_ns_per_iter);
  CHECK(*cb.cpu_ns_per_iter == doctest::Approx(4'000'000.0 / 10));
  CHECK_FALSE(has_warning(*side, "outside the measured rounds"));
  CHECK(side->warnings.empty());
  CHECK(side->warnings.empty());
}

TEST_CASE("samples: warmup iterations count when the window held them") {
  TempDir dir;
  // Summary stats only (as CodSpeed's integrations write them): 10 rounds
  // of 100 iterations, 1 us each: 1 ms measured; 500 warmup iterations
  // (0.5 ms at that pace).
  auto result = summary("w", 1000, 10, 100);
  result.stats.total_time = 1e-3;
  result.stats.warmup_iters = 500;
  for (bool inside : {false, true}) {
    CAPTURE(inside);
    const std::string f = dir.file(inside ? "inside" : "outside");
    write_results(f, {result});
    write_uris(f, {{100'000'000, "t.cpp::w"}});
    // The window: the rounds alone, or the rounds and the warmup.
    const uint64_t wall = inside ? 1'550'000 : 1'020'000;
    write_counters(f, {window(50'000'000, 50'000'000 + wall, 3'000'000)});
    auto side = compare::load_side("base", {f});
    REQUIRE_MESSAGE(side, side.error().what());
    const auto& c = side->benchmarks.at(0).folder_counters.at(0);
    CHECK(c.iterations == (inside ? 1500 : 1000));
    CHECK(c.warmup_iterations == (inside ? 500 : 0));
    REQUIRE(c.cpu_ns_per_iter);
    CHECK(*c.cpu_ns_per_iter == doctest::Approx(3e6 / (inside ? 1500 : 1000)));
  }
}

TEST_CASE("samples: unmeasured window time without reported warmup is said") {
  TempDir dir;
  const std::string f = dir.file("f");
  // exec-harness style: warmup rounds inside the window, warmup_iters 0.
  write_results(f, {rounds_result("x", 5, 1, 10'000'000)});
  write_uris(f, {{200'000'000, "t.cpp::x"}});
  write_counters(f, {window(0, 150'000'000, 140'000'000)});
  auto side = compare::load_side("head", {f});
  REQUIRE_MESSAGE(side, side.error().what());
  CHECK(has_warning(*side, "66% of its benchmark windows is outside"));
  const auto& c = side->benchmarks.at(0).folder_counters.at(0);
  CHECK(c.iterations == 5);
}

TEST_CASE("samples: folders without counters, broken counters, lost windows") {
  TempDir dir;
  const std::string with = dir.file("with"), without = dir.file("without"),
                    broken = dir.file("broken");
  write_folders({with, without, broken}, "a", 10'000'000);
  write_counters(with, {window(1'000'000, 6'000'000, 4'000'000)}, 2);
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(broken).run_counters(), "{\"version\": 1, "));
  auto side = compare::load_side("head", {with, without, broken});
  REQUIRE_MESSAGE(side, side.error().what());
  const auto& b = side->benchmarks.at(0);
  REQUIRE(b.folder_counters.size() == 3);
  CHECK(b.folder_counters[0].cpu_ns_per_iter);
  CHECK(b.folder_counters[0].lost_windows == 2);
  CHECK_FALSE(b.folder_counters[1].counters_file);
  CHECK_FALSE(b.folder_counters[1].cpu_ns_per_iter);
  CHECK_FALSE(b.folder_counters[2].counters_file);
  CHECK_FALSE(b.folder_counters[2].cpu_ns_per_iter);
  CHECK(has_warning(*side, "2 benchmark window(s) have no counts"));
  CHECK(has_warning(*side, "runner.counters.json: not JSON"));
}

TEST_CASE("samples: instructions per iteration, multiplexed said") {
  TempDir dir;
  const std::string f = dir.file("f");
  format::CounterWindow w = multiplexed_folder(f);
  write_counters(f, {w});
  auto side = compare::load_side("head", {f});
  REQUIRE_MESSAGE(side, side.error().what());
  const auto& c = side->benchmarks.at(0).folder_counters.at(0);
  REQUIRE(c.instructions_per_iter);
  CHECK(*c.instructions_per_iter == doctest::Approx(50'000));
  CHECK(c.multiplexed);
  CHECK(has_warning(*side, "multiplexed"));
}

// ---- --metric cpu / instructions --------------------------------------------

TEST_CASE("samples: --metric cpu, a window per round gives each round's") {
  TempDir dir;
  const std::string f = dir.file("f");
  write_results(f, {rounds_result("a", 3, 10, 1'000'000)});
  write_uris(f, {{90'000'000, "t.cpp::a"}});
  write_counters(f, {window(1'000'000, 2'000'000, 900'000),
                     window(3'000'000, 4'000'000, 1'200'000),
                     window(5'000'000, 6'000'000, 1'000'000)});
  auto side = compare::load_side("head", {f}, format::Metric::kCpu);
  REQUIRE_MESSAGE(side, side.error().what());
  const compare::SideSamples& s = side->benchmarks.at(0).samples;
  CHECK(s.source == format::SampleSource::kRounds);
  CHECK(s.times_ns == std::vector<double>{90'000, 120'000, 100'000});
  CHECK(s.folder_medians_ns == std::vector<double>{100'000});
  CHECK(side->benchmarks.at(0).folder_medians_ns == s.folder_medians_ns);
  // Wall time is still the rounds' (1 ms / 10).
  auto wall = compare::load_side("head", {f});
  REQUIRE_MESSAGE(wall, wall.error().what());
  CHECK(wall->benchmarks.at(0).samples.times_ns ==
        std::vector<double>(3, 100'000));
}

TEST_CASE("samples: --metric cpu, one window for all rounds: one per run") {
  TempDir dir;
  const std::string a = dir.file("a"), b = dir.file("b");
  write_folders({a, b}, "x", 90'000'000);
  write_counters(a, {window(1'000'000, 5'000'000, 8'000'000)});
  write_counters(b, {window(1'000'000, 5'000'000, 6'000'000)});
  auto side = compare::load_side("base", {a, b}, format::Metric::kCpu);
  REQUIRE_MESSAGE(side, side.error().what());
  const compare::SideSamples& s = side->benchmarks.at(0).samples;
  CHECK(s.source == format::SampleSource::kRuns);
  CHECK(s.times_ns.empty());
  CHECK_FALSE(s.summary);
  CHECK(s.folders == 2);
  CHECK(s.folder_medians_ns == std::vector<double>{200'000, 150'000});
  CHECK(s.unavailable.empty());
}

TEST_CASE("samples: --metric without counters is an error naming why") {
  TempDir dir;
  const std::string none = dir.file("none"), pmu = dir.file("pmu"),
                    late = dir.file("late");
  write_folders({none, pmu, late}, "x", 90'000'000);
  write_counters(pmu, {window(1'000'000, 5'000'000, 4'000'000)});
  // A window after the last URI: the benchmark has none.
  write_counters(late, {window(95'000'000, 96'000'000, 4'000'000)});
  auto missing = compare::load_side("head", {pmu, none}, format::Metric::kCpu);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().what() == "head folder '" + none +
                                      "': --metric cpu: no readable "
                                      "runner.counters.json (the runner "
                                      "counts CPU time and instructions into "
                                      "it during the run)");
  auto instructions =
      compare::load_side("base", {pmu}, format::Metric::kInstructions);
  REQUIRE_FALSE(instructions);
  CHECK(instructions.error().what() ==
        "base folder '" + pmu +
            "': --metric instructions: instructions was not counted in this "
            "run (no hardware PMU here)");
  auto no_window =
      compare::load_side("head", {pmu, late}, format::Metric::kCpu);
  REQUIRE_MESSAGE(no_window, no_window.error().what());
  const compare::SideSamples& s = no_window->benchmarks.at(0).samples;
  CHECK(s.source == format::SampleSource::kRuns);
  CHECK(s.unavailable == "head folder '" + late +
                             "': t.cpp::x: no CPU time per iteration (no "
                             "benchmark window)");
}

TEST_CASE("samples: --metric instructions refuses multiplexed counts") {
  TempDir dir;
  const std::string f = dir.file("f");
  format::CounterWindow w = multiplexed_folder(f);
  format::RunCounters c;
  c.counters = {{"task-clock", true, false, ""},
                {"instructions", true, true, ""},
                {"cycles", false, false, "not asked"}};
  c.windows = {w};
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(f).run_counters(), format::write_run_counters(c)));
  auto side = compare::load_side("head", {f}, format::Metric::kInstructions);
  REQUIRE_MESSAGE(side, side.error().what());
  const compare::SideSamples& s = side->benchmarks.at(0).samples;
  CHECK(s.unavailable.find("instructions were multiplexed") !=
        std::string::npos);
  CHECK(s.user_only);
  // The same window unmultiplexed: 5M / 100 iterations, one value per run.
  w.instructions->running_ns = w.instructions->enabled_ns;
  c.windows = {w};
  REQUIRE(runner::base::write_file_atomic(
      format::ProfileLayout(f).run_counters(), format::write_run_counters(c)));
  side = compare::load_side("head", {f}, format::Metric::kInstructions);
  REQUIRE_MESSAGE(side, side.error().what());
  CHECK(side->benchmarks.at(0).samples.unavailable.empty());
  CHECK(side->benchmarks.at(0).samples.folder_medians_ns ==
        std::vector<double>{50'000});
}

TEST_CASE("samples: --metric cpu, a window holding warmup is not a round's") {
  // One round, one window, but the window also ran 10 warmup iterations
  // (exec-harness with --max-rounds 1): one value per run, warmup counted.
  TempDir dir;
  const std::string f = dir.file("f");
  auto result = rounds_result("x", 1, 10, 10'000'000);
  result.stats.warmup_iters = 10;
  write_results(f, {result});
  write_uris(f, {{90'000'000, "t.cpp::x"}});
  write_counters(f, {window(1'000'000, 21'500'000, 20'000'000)});
  auto side = compare::load_side("head", {f}, format::Metric::kCpu);
  REQUIRE_MESSAGE(side, side.error().what());
  const compare::SideSamples& s = side->benchmarks.at(0).samples;
  CHECK(s.source == format::SampleSource::kRuns);
  CHECK(s.folder_medians_ns == std::vector<double>{1'000'000});
}
