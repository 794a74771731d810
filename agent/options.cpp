#include "agent/options.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "agent/man_page.hpp"
#include "config.h"
#include "integrations/exec-harness/exec_harness.hpp"
#include "profiler/profiler.hpp"

namespace runner::agent {
namespace {

using exec_harness::add_parsed_option;

template <typename E>
struct Named {
  std::string_view name;
  E value;
};

constexpr std::array<Named<profiler::SamplingEvent>, 4> kEvents{{
    {"auto", profiler::SamplingEvent::kAuto},
    {"cycles", profiler::SamplingEvent::kCycles},
    {"cpu-clock", profiler::SamplingEvent::kCpuClock},
    {"task-clock", profiler::SamplingEvent::kTaskClock},
}};

constexpr std::array<Named<report::ReportOptions::Format>, 3> kFormats{{
    {"summary", report::ReportOptions::Format::kDefault},
    {"perf-script", report::ReportOptions::Format::kPerfScript},
    {"speedscope", report::ReportOptions::Format::kSpeedscope},
}};

constexpr std::array<Named<compare::OutputFormat>, 3> kCompareFormats{{
    {"text", compare::OutputFormat::kText},
    {"markdown", compare::OutputFormat::kMarkdown},
    {"json", compare::OutputFormat::kJson},
}};

constexpr std::array<Named<history::OutputFormat>, 4> kHistoryFormats{{
    {"text", history::OutputFormat::kText},
    {"markdown", history::OutputFormat::kMarkdown},
    {"json", history::OutputFormat::kJson},
    {"html", history::OutputFormat::kHtml},
}};

constexpr std::array<Named<format::Correction>, 3> kCorrections{{
    {"holm", format::Correction::kHolm},
    {"bh", format::Correction::kBenjaminiHochberg},
    {"none", format::Correction::kNone},
}};
constexpr std::array<Named<format::Metric>, 3> kMetrics{{
    {"wall", format::Metric::kWall},
    {"cpu", format::Metric::kCpu},
    {"instructions", format::Metric::kInstructions},
}};

constexpr uint32_t kMaxFrequency = 100000;
constexpr auto kMaxKillAfter = std::chrono::hours(1);
constexpr uint64_t kMaxTop = 10000;
constexpr uint64_t kMaxPairs = 1000000;

// "a, b or c".
template <typename E, size_t N>
std::string names_of(const std::array<Named<E>, N>& names) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += names[i].name;
  }
  return out;
}

// An option whose value is one of `names`; anything else is a usage error
// that lists them.
template <typename E, size_t N>
CLI::Option* add_enum_option(CLI::App& app, const std::string& flags, E& out,
                             const std::array<Named<E>, N>& names,
                             std::string help) {
  auto parse = [&names](const std::string& text) -> base::Result<E> {
    for (const auto& named : names)
      if (named.name == text) return named.value;
    return base::Error("'" + text + "' is not allowed: expected " +
                       names_of(names));
  };
  std::string type = "{";
  for (const auto& named : names)
    type += std::string(type.size() > 1 ? "," : "") + std::string(named.name);
  return add_parsed_option(app, flags, out, parse, type + "}", std::move(help));
}

constexpr const char* kCallGraphAllowed =
    "expected dwarf, dwarf,SIZE (SIZE: stack bytes copied per sample, a "
    "multiple of 8 up to 65528, e.g. dwarf,16384 or dwarf,16K) or fp";

// --call-graph dwarf[,SIZE] | fp into the sampler options.
void add_call_graph_option(CLI::App& app, RunOptions& run) {
  auto set = [&run](const std::string& text) {
    profiler::SamplerOptions& sampler = run.sampler;
    auto fail = [&text](const std::string& why) {
      return CLI::ValidationError(
          "--call-graph", "'" + text + "' " + why + ": " + kCallGraphAllowed);
    };
    if (text == "fp") {
      sampler.call_graph = profiler::CallGraphMode::kFramePointer;
      return;
    }
    if (text != "dwarf" && !text.starts_with("dwarf,"))
      throw fail("is not allowed");
    sampler.call_graph = profiler::CallGraphMode::kDwarf;
    run.stack_size_given = false;
    if (text == "dwarf") return;
    auto size = format::parse_size(std::string_view(text).substr(6));
    if (!size || *size > UINT32_MAX) throw fail("has an invalid SIZE");
    sampler.stack_size = static_cast<uint32_t>(*size);
    run.stack_size_given = true;
  };
  app.add_option_function<std::string>(
         "--call-graph", set,
         "How stacks are recorded: dwarf[,SIZE] copies SIZE bytes of stack "
         "per sample for DWARF unwinding (default dwarf,8192, and dwarf,32768 "
         "for a command that runs CPython or a JVM; SIZE <= 65528, 8-byte "
         "aligned), fp follows frame pointers")
      ->type_name("{dwarf[,SIZE],fp}")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

base::Result<std::chrono::milliseconds> parse_kill_after(
    const std::string& text) {
  RUNNER_ASSIGN_OR_RETURN(format::Duration d, format::parse_duration(text),
                          "--kill-after");
  if (d > kMaxKillAfter)
    return base::Error("invalid duration '" + text +
                       "': at most 1h (3600 seconds)");
  return std::chrono::round<std::chrono::milliseconds>(d);
}

// -F, --call-graph and --mmap-size: what the rate and the buffers depend on
// (run, exec, and doctor's capacity check); --event too with `event`.
void add_rate_options(CLI::App& app, RunOptions& run, bool event) {
  profiler::SamplerOptions& sampler = run.sampler;
  add_parsed_option(
      app, "-F,--freq", sampler.frequency,
      [](const std::string& text) {
        return format::parse_frequency(text, 1, kMaxFrequency);
      },
      "HZ", "Sampling frequency in Hz, 1..100000 (default 997)");
  add_call_graph_option(app, run);
  if (event)
    add_enum_option(app, "--event", sampler.event, kEvents,
                    "Sampling event: auto (cycles where the machine has a "
                    "hardware PMU, else cpu-clock), cycles, cpu-clock or "
                    "task-clock (default auto)");
  add_parsed_option(app, "--mmap-size", sampler.mmap_size, format::parse_size,
                    "SIZE",
                    "Ring buffer per CPU, a power-of-two number of pages, "
                    "e.g. 8M, 512K (default: ~0.5 s of samples, 4M for 997 "
                    "Hz and dwarf,8192)");
}

void add_sampling_options(CLI::App& app, RunOptions& run) {
  add_rate_options(app, run, /*event=*/true);
  add_parsed_option(
      app, "--drain-threads", run.sampler.drain_threads,
      [](const std::string& text) -> base::Result<uint32_t> {
        RUNNER_ASSIGN_OR_RETURN(uint64_t n,
                                format::parse_count(text, "drain thread count"),
                                "--drain-threads");
        if (n == 0 || n > profiler::kMaxDrainThreads)
          return base::Error("--drain-threads: " + std::string(text) +
                             " is not between 1 and " +
                             std::to_string(profiler::kMaxDrainThreads));
        return static_cast<uint32_t>(n);
      },
      "N",
      "Threads that drain the ring buffers, each a group of CPUs (default: "
      "one per 64,000 samples a second of every CPU busy, at most one per "
      "two CPUs)");
  app.add_flag("--compress{1}", run.sampler.compress_level,
               "Write perf.pipedata's kernel records zstd-compressed, as perf "
               "record -z does: --compress=LEVEL, 1..19 (bare --compress: 1); "
               "perf script and runner report read the file as usual")
      ->check(CLI::Range(1, 19))
      ->type_name("[=LEVEL]")
      // A flag: the level only with '=' (the command follows), the last one
      // given wins (CLI11 sums integer flags otherwise).
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag_callback(
      "--no-tracking-event", [&run] { run.sampler.tracking_event = false; },
      "No always-on side-band event: mappings of processes that exec outside "
      "benchmark windows then come from /proc snapshots only");
}

// The options `run` and `exec` share.
void add_profile_options(CLI::App& app, RunOptions& run) {
  app.add_option("--profile-folder", run.profile_folder,
                 "Where artifacts go (default: ./runner-profile.<timestamp>)")
      ->type_name("DIR");
  add_sampling_options(app, run);
  app.add_flag_callback(
      "--no-profile", [&run] { run.profile = false; },
      "Run without FIFOs or sampling (integrations see no runner)");
  app.add_flag("--allow-no-profile", run.allow_no_profile,
               "If perf_event_open is refused, run the benchmark unprofiled "
               "instead of failing; also accept a run whose benchmarks never "
               "reached the runner over the FIFO");
  app.add_flag("--allow-empty", run.allow_empty,
               "Do not fail when the benchmark produced no results");
  app.add_flag("--report", run.report,
               "Run 'runner report' on the folder at the end");
  app.add_flag_callback(
      "--no-language-support", [&run] { run.language_support = false; },
      "Leave NODE_OPTIONS, PYTHONPERFSUPPORT, PYTHON_PERF_JIT_SUPPORT, "
      "JAVA_TOOL_OPTIONS and PATH as they are (by default the runner adds perf "
      "maps, "
      "jitdumps and frame pointers for Node, CPython and Java, extending what "
      "is set, and puts first on PATH a node that passes the V8 flags "
      "CodSpeed's Node plugins check; under exec, exec-harness still adds "
      "--perf-basic-prof to NODE_OPTIONS, as CodSpeed's does)");
  app.add_flag_callback(
      "--no-cache", [&run] { run.cache = false; },
      "Build every symbols map, unwind table and debug info afresh instead of "
      "reusing the finalize cache ($XDG_CACHE_HOME/runner/finalize, else "
      "~/.cache/runner/finalize; size cap RUNNER_CACHE_MAX_MB, default 512, "
      "0 turns it off)");
  add_parsed_option(app, "--kill-after", run.kill_after, parse_kill_after,
                    "DURATION",
                    "When the runner is interrupted it forwards the signal to "
                    "the benchmark, then sends SIGKILL if it still runs this "
                    "long later (default 5s, at most 1h)");
  app.add_option("--fifo-dir", run.fifo_dir,
                 "Create the FIFOs and lock in DIR instead of /tmp "
                 "(integrations find them through RUNNER_CTL_FIFO and "
                 "RUNNER_ACK_FIFO); for tests")
      ->type_name("DIR")
      ->group("");  // hidden from --help, documented in the man page
  app.add_flag("--shared-fifos", run.shared_fifos,
               "Serve /tmp/runner.{ctl,ack}.fifo to the whole machine under "
               "the lock /tmp/runner.fifo.lock (one runner at a time) instead "
               "of in the benchmark's own mount namespace");
}

constexpr const char* kArtifacts =
    "Artifacts (in the profile folder):\n"
    "  perf.pipedata                 samples and side-band records (perf "
    "pipe format)\n"
    "  <i>__<name>.symbols.map       symbols of each unique ELF file\n"
    "  <i>__<name>.unwind_data       .eh_frame(+hdr) of each unique ELF file "
    "(bincode V4)\n"
    "  perf.metadata                 per-pid load biases and keys, counters\n"
    "  ExecutionTimestamps.msgpack   benchmark URIs and markers\n"
    "  runner.counters.json          CPU time (task-clock) of each benchmark "
    "window\n"
    "  results/<pid>.json            walltime results written by the "
    "benchmark\n"
    "  runner.log                    the runner's own log";

constexpr const char* kRunDescription =
    "Runs COMMAND (no shell) with CODSPEED_ENV=runner,\n"
    "CODSPEED_RUNNER_MODE=walltime and CODSPEED_PROFILE_FOLDER set, serves "
    "the\nrunner FIFOs (/tmp/runner.ctl.fifo, /tmp/runner.ack.fifo), samples "
    "the\nprocess tree inside StartBenchmark/StopBenchmark windows and writes "
    "the\nprofile folder. Exits with the benchmark's exit code (128+N if "
    "killed by\nsignal N, or if the runner was interrupted by signal N), "
    "else 1 if no\nbenchmark reached the runner (a program without a "
    "CodSpeed integration:\nuse 'runner exec'). Processes the benchmark "
    "leaves running are killed\nat the end.";

constexpr const char* kExecDescription =
    "Runs COMMAND as a walltime benchmark through exec-harness (rounds of\n"
    "spawn + wait), profiled like 'runner run' with every pid of the run "
    "kept.\nWithout COMMAND, the benchmarks come from runner.yml or "
    "codspeed.yml in\nthe working directory ('options:' defaults and a "
    "'benchmarks:' list of\n'exec:' commands).";

// A subcommand that selects `command` when the command line names it.
CLI::App* add_command(CLI::App& app, const char* name, const char* description,
                      Command command, CommandLine& out) {
  CLI::App* sub = app.add_subcommand(name, description);
  sub->callback([&out, command] { out.command = command; });
  return sub;
}

// run and exec: COMMAND follows the options, the profile options, and the
// artifacts listed after them in --help.
CLI::App* add_profiled_command(CLI::App& app, const char* name,
                               const char* description, Command command,
                               CommandLine& out) {
  CLI::App* sub = add_command(app, name, description, command, out);
  sub->prefix_command();
  sub->footer(kArtifacts);
  return sub;
}

base::Result<uint64_t> parse_part_size(const std::string& text) {
  auto size = format::parse_size(text);
  if (!size) return size.error();
  if (*size < (5u << 20) || *size > (5ull << 30))
    return base::Error("'" + text + "': parts are 5M to 5G");
  return *size;
}

// Where a folder goes: --upload-url/--token (CodSpeed's protocol) or
// --store (the S3 store) with --s3-endpoint and --multipart-threshold.
void add_destination_options(CLI::App& app, UploadOptions& upload) {
  app.add_option("--upload-url", upload.upload_url,
                 "The CodSpeed-compatible upload endpoint (default: "
                 "$CODSPEED_UPLOAD_URL, else https://api.codspeed.io/upload)")
      ->type_name("URL");
  app.add_option("--token", upload.token,
                 "The upload token (default: $CODSPEED_TOKEN; without one, "
                 "GitHub OIDC when the job may request an id token, else "
                 "tokenless); never printed")
      ->type_name("TOKEN");
  app.add_option("--store", upload.store,
                 "Store the folder in the S3-compatible store "
                 "s3://BUCKET[/PREFIX] instead (credentials from "
                 "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; "
                 "region AWS_REGION, default us-east-1)")
      ->type_name("URL");
  app.add_option("--s3-endpoint", upload.s3_endpoint,
                 "--store: the S3 endpoint, path-style (default: "
                 "$AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)")
      ->type_name("URL");
  add_parsed_option(app, "--multipart-threshold", upload.multipart_threshold,
                    parse_part_size, "SIZE",
                    "--store: archives above SIZE go up as multipart uploads "
                    "in parts of SIZE (default 64M, at least 5M)");
}

constexpr const char* kRunUploadHelp =
    "Upload the profile folder at the end of the run (CodSpeed's protocol; "
    "see --upload-url, --token; or --store). If the benchmark succeeded but "
    "the upload failed, the exit status is 3; the folder is kept";

void add_run(CLI::App& app, CommandLine& out) {
  CLI::App* run =
      add_profiled_command(app, "run", kRunDescription, Command::kRun, out);
  add_profile_options(*run, out.run);
  run->add_flag("--upload", out.upload.codspeed, kRunUploadHelp);
  add_destination_options(*run, out.upload);
}

void add_exec(CLI::App& app, CommandLine& out) {
  CLI::App* exec =
      add_profiled_command(app, "exec", kExecDescription, Command::kExec, out);
  exec_harness::add_benchmark_options(*exec, out.exec);
  exec->add_flag("--interleave", out.exec.interleave,
                 "Run two commands, COMMAND_A ::: COMMAND_B, alternately round "
                 "by round in ABBA order (A B B A A B ...) in this one run: "
                 "two benchmarks with as many rounds each, round i of A and "
                 "of B a pair for 'runner compare --interleaved', COMMAND_A "
                 "its base (without COMMAND: the two benchmarks of "
                 "runner.yml)");
  add_profile_options(*exec, out.run);
  exec->add_flag("--upload", out.upload.codspeed, kRunUploadHelp);
  add_destination_options(*exec, out.upload);
}

base::Result<unsigned> parse_top(const std::string& text) {
  auto n = format::parse_count(text, "number");
  if (n && *n >= 1 && *n <= kMaxTop) return static_cast<unsigned>(*n);
  return base::Error("'" + text + "' is not allowed: expected 1.." +
                     std::to_string(kMaxTop));
}

// Report threads: 1..kMaxReportThreads.
base::Result<unsigned> parse_threads(const std::string& text) {
  auto n = format::parse_count(text, "number");
  if (n && *n >= 1 && *n <= report::kMaxReportThreads)
    return static_cast<unsigned>(*n);
  return base::Error("'" + text + "' is not allowed: expected 1.." +
                     std::to_string(report::kMaxReportThreads));
}

// A count in [min, kMaxPairs].
auto pair_count_parser(uint64_t min) {
  return [min](const std::string& text) -> base::Result<uint64_t> {
    auto n = format::parse_count(text, "number");
    if (n && *n >= min && *n <= kMaxPairs) return *n;
    return base::Error("'" + text + "' is not allowed: expected " +
                       std::to_string(min) + ".." + std::to_string(kMaxPairs));
  };
}

// A plain decimal number (no sign, no exponent, no "inf"/"nan"), followed
// by `suffix` when given.
std::optional<double> parse_plain_number(std::string_view text) {
  if (text.empty() ||
      text.find_first_not_of("0123456789.") != std::string_view::npos)
    return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                   value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value))
    return std::nullopt;
  return value;
}

// --threshold: a percentage "5", "5%" or "2.5", 0 < PCT < 100, as a
// fraction.
base::Result<double> parse_threshold(const std::string& text) {
  std::string_view number = text;
  if (number.ends_with('%')) number.remove_suffix(1);
  auto value = parse_plain_number(number);
  if (value && *value > 0 && *value < 100) return *value / 100;
  return base::Error("'" + text +
                     "' is not allowed: expected a percentage between 0 and "
                     "100 (exclusive), e.g. 5, 5% or 2.5");
}

base::Result<double> parse_alpha(const std::string& text) {
  auto value = parse_plain_number(text);
  if (value && *value > 0 && *value < 1) return *value;
  return base::Error("'" + text +
                     "' is not allowed: expected a number between 0 and 1 "
                     "(exclusive), e.g. 0.05");
}

void add_report(CLI::App& app, CommandLine& out) {
  CLI::App* report = add_command(
      app, "report",
      "Unwinds and symbolizes every sample of a profile folder from the "
      "folder\nalone and writes, per benchmark, folded stacks, an interactive "
      "flamegraph\nSVG and summary.json into PROFILE_FOLDER/report/.",
      Command::kReport, out);
  report::ReportOptions& options = out.report;
  report->add_option("PROFILE_FOLDER", options.folder,
                     "The profile folder (default: the newest "
                     "runner-profile.* in the current directory)");
  report->add_flag_callback(
      "--no-demangle", [&options] { options.demangle = false; },
      "Keep raw (mangled) symbol names");
  report->add_flag("--inline", options.inline_frames,
                   "Expand inlined frames when the original ELF files with "
                   "DWARF are present");
  add_enum_option(*report, "--format", options.format, kFormats,
                  "summary (default: the terminal summary), perf-script "
                  "(print samples like perf script) or speedscope (also "
                  "write report/profile.speedscope.json for the speedscope "
                  "viewer)");
  add_parsed_option(*report, "--top", options.top, parse_top, "N",
                    "Functions per benchmark in the summary (default 10)");
  add_parsed_option(*report, "--threads", options.threads, parse_threads, "N",
                    "Threads: 1 does everything; N > 1: one reads, one "
                    "symbolizes and writes in file order, N - 1 unwind "
                    "(default: one unwinding thread per CPU)");
}

constexpr const char* kCompareDescription =
    "Compares two sides, BASE and HEAD, benchmark by benchmark (matched by "
    "URI):\na verdict (regression, improvement, unchanged or inconclusive), "
    "the change\nhead/base - 1 with its 95% confidence interval, and the "
    "p-value. A side is\none or more profile folders (several: repeated runs "
    "of one commit, pooled,\nwith their run-to-run spread reported); a "
    "folder with only results/*.json\nworks too. Writes compare.json, "
    "compare.md and, per benchmark profiled on\nboth sides, a differential "
    "flamegraph <name>.diff.svg into --out.";

constexpr const char* kCompareFooter =
    "Data per benchmark, best first: the round arrays of results/*.json, the\n"
    "RoundStart/RoundEnd markers of ExecutionTimestamps.msgpack, the summary\n"
    "stats. Raw rounds: Mann-Whitney U test and Hodges-Lehmann shift; "
    "summary\nstats only: a median test on the quartiles (Welch's t-test on "
    "the means when\na side has no quartiles or pools folders). Fewer than 6 "
    "rounds on a side:\ninconclusive.\nRegression: significant at --alpha "
    "(after --correction), "
    "change above\n--threshold, the confidence interval above zero, and the "
    "lower quartile of the\nrounds moved beyond --threshold too (else "
    "inconclusive: a disturbed run).\nUnchanged: the whole confidence "
    "interval within +-threshold. Anything else\nis inconclusive, with the "
    "smallest change the data could have detected.\n"
    "\n"
    "Paired mode (--paired): BASE and HEAD are shell commands (/bin/sh -c), "
    "run\nalternately in ABBA order (A B B A, A B B A, ...) for "
    "--warmup-pairs +\n--pairs pairs, each run timed; the pairs' differences "
    "are tested with\nWilcoxon's signed-rank test, so slow machine drift "
    "hits both sides equally:\n"
    "  runner compare --paired --pairs 30 './bench-old --quick' "
    "'./bench-new --quick'\n"
    "\n"
    "Interleaved mode (--interleaved FOLDER): the folder of one run of "
    "'runner exec\n--interleave -- COMMAND_A ::: COMMAND_B', whose two "
    "benchmarks alternated round\nby round in ABBA order under the runner; "
    "COMMAND_A is the base, COMMAND_B the\nhead, round i of each a pair, "
    "tested like --paired. Refused unless the folder\nholds exactly these "
    "two benchmarks with as many rounds each, in ABBA order:\n"
    "  runner exec --interleave --max-rounds 30 --profile-folder ab -- "
    "./bench-old ::: ./bench-new\n"
    "  runner compare --interleaved ab\n"
    "\n"
    "Metric (--metric): wall compares the rounds' elapsed time, what a user "
    "waits\nfor; cpu compares the CPU time the runner counted (task-clock, "
    "user + kernel\nof the benchmark's process tree) per iteration, which a "
    "busy machine's waiting\nfor a CPU does not inflate; instructions "
    "compares instructions per\niteration (hardware PMU only), the most "
    "stable and the least like time. cpu\nand instructions have a value per "
    "round in an interleaved run (a benchmark\nwindow per round), else one "
    "per run: then give several runs per side\n(--base/--head).\n"
    "\n"
    "Exit status: 0 no benchmark regressed, 1 at least one regressed, 3 none "
    "regressed\nand one is inconclusive with --fail-on-inconclusive, 2 bad "
    "input (missing\nfolder, no results, unreadable JSON) or an output that "
    "could not be written;\n130 when --paired was interrupted (Ctrl-C, "
    "SIGTERM): the running round's\nprocess group is signalled, then killed 2 "
    "s later; after every round,\nwhatever the command left running in its "
    "process group is killed.";

// BASE HEAD, --base/--head, --out, --format.
void add_compare_sides(CLI::App& sub, CommandLine& out) {
  compare::CompareOptions& options = out.compare;
  sub.add_option("BASE", out.compare_base,
                 "The base: a profile folder (--paired: a shell command; "
                 "--interleaved: the one folder)");
  sub.add_option("HEAD", out.compare_head,
                 "The head: a profile folder (--paired: a shell command)");
  sub.add_option("--base", options.base,
                 "One more base folder (repeatable): repeated runs are pooled "
                 "and their spread reported (--store: the branch whose newest "
                 "stored push is the base)")
      ->type_name("DIR")
      ->allow_extra_args(false)  // one value per --base: HEAD may follow
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_option("--head", options.head,
                 "One more head folder (repeatable), like --base")
      ->type_name("DIR")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub.add_option("--out", options.out_dir,
                 "Where compare.json, compare.md and the *.diff.svg go "
                 "(default: HEAD/compare; --paired: nothing written unless "
                 "given); created if missing, refused if a symbolic link or "
                 "another user's")
      ->type_name("DIR");
  add_enum_option(sub, "--format", options.format, kCompareFormats,
                  "What is printed: text (default: aligned columns), markdown "
                  "(compare.md, for a pull request or $GITHUB_STEP_SUMMARY) "
                  "or json (compare.json)");
}

// --threshold, --alpha, --correction, --top, and the paired mode.
void add_compare_settings(CLI::App& sub, compare::CompareOptions& options) {
  format::CompareSettings& settings = options.settings;
  add_parsed_option(sub, "--threshold", settings.threshold, parse_threshold,
                    "PCT",
                    "Smallest change that counts, in percent, 0 < PCT < 100: "
                    "5, 5% or 2.5 (default 5)");
  add_parsed_option(sub, "--alpha", settings.alpha, parse_alpha, "A",
                    "Significance level, 0 < A < 1 (default 0.05)");
  add_enum_option(sub, "--correction", settings.correction, kCorrections,
                  "Control of false alarms across benchmarks: holm "
                  "(Holm–Bonferroni, default; controls the family-wise error "
                  "rate, the chance of any false alarm), bh "
                  "(Benjamini–Hochberg; controls the false discovery rate, "
                  "the expected share of false alarms among the flagged) or "
                  "none");
  add_enum_option(sub, "--metric", settings.metric, kMetrics,
                  "What is compared per iteration: wall (default: the "
                  "rounds' elapsed time), cpu (the benchmark's CPU time, user "
                  "+ kernel of its processes, counted by the runner) or "
                  "instructions (hardware PMU only); see below");
  add_parsed_option(sub, "--top", options.top, parse_top, "N",
                    "Functions per benchmark by change of self-time share "
                    "(default 10)");
  sub.add_flag("--paired", settings.paired,
               "BASE and HEAD are shell commands, timed in ABBA order (see "
               "below)");
  sub.add_flag("--interleaved", options.interleaved,
               "BASE is one folder of 'runner exec --interleave': its first "
               "benchmark (COMMAND_A) is the base, its second (COMMAND_B) the "
               "head, round i of each a pair (see below)");
  add_parsed_option(sub, "--pairs", options.pairs, pair_count_parser(1), "N",
                    "--paired: measured pairs (default 20)");
  add_parsed_option(sub, "--warmup-pairs", options.warmup_pairs,
                    pair_count_parser(0), "N",
                    "--paired: pairs run first and not measured (default 1)");
}

void add_compare(CLI::App& app, CommandLine& out) {
  CLI::App* sub =
      add_command(app, "compare", kCompareDescription, Command::kCompare, out);
  sub->footer(kCompareFooter);
  add_compare_sides(*sub, out);
  add_compare_settings(*sub, out.compare);
  sub->add_option("--store", out.compare_store,
                  "Take the base from the S3-compatible store "
                  "s3://BUCKET[/PREFIX]: the newest run of a push to the "
                  "branch --base names, never a pull request's (default: the "
                  "pull request's base branch from the CI environment, else "
                  "main), fetched into $XDG_CACHE_HOME/runner/store (limits: "
                  "RUNNER_STORE_MAX_UNPACK_MB, default 4096; "
                  "RUNNER_STORE_MAX_ENTRIES, default 20000; the cache keeps "
                  "RUNNER_STORE_CACHE_MAX_MB, default 2048); HEAD is the only "
                  "folder")
      ->type_name("URL");
  sub->add_option("--s3-endpoint", out.compare_s3_endpoint,
                  "--store: the S3 endpoint (default: $AWS_ENDPOINT_URL_S3, "
                  "$AWS_ENDPOINT_URL, else AWS)")
      ->type_name("URL");
  sub->add_option("--verdict-file", out.compare_verdict_file,
                  "Write the overall verdict (regression, inconclusive, "
                  "improvement or unchanged: the first any benchmark has, in "
                  "that order; inconclusive too when no benchmark is on both "
                  "sides) and a newline to FILE, only when the comparison was "
                  "made (exit 0, 1 or 3); the file is removed first, so it is "
                  "missing after any failure")
      ->type_name("FILE");
  sub->add_flag("--fail-on-inconclusive", out.compare.fail_on_inconclusive,
                "Exit 3 when no benchmark regressed but one is inconclusive "
                "(the data cannot tell whether it changed by more than "
                "--threshold)");
}

// A count in [min, max].
auto count_parser(uint64_t min, uint64_t max) {
  return [min, max](const std::string& text) -> base::Result<uint64_t> {
    auto n = format::parse_count(text, "number");
    if (n && *n >= min && *n <= max) return *n;
    return base::Error("'" + text + "' is not allowed: expected " +
                       std::to_string(min) + ".." + std::to_string(max));
  };
}

base::Result<std::chrono::milliseconds> parse_budget(const std::string& text) {
  RUNNER_ASSIGN_OR_RETURN(format::Duration d, format::parse_duration(text),
                          "--budget");
  if (d < std::chrono::seconds(1) || d > std::chrono::hours(24))
    return base::Error("invalid duration '" + text + "': between 1s and 24h");
  return std::chrono::round<std::chrono::milliseconds>(d);
}

constexpr const char* kHistoryDescription =
    "Every benchmark's trend over the stored runs of pushes to a branch "
    "(runner\nupload --store), its change points, and a page to look at. "
    "Reads the\nstore's records (cached in $XDG_CACHE_HOME/runner/"
    "store-records); fetches\nthe two runs around each of the newest change "
    "points and compares them\n(runner compare, with the differential "
    "flamegraphs). Writes history.json,\nhistory.md and index.html (a "
    "self-contained page) into --out.";

void add_history_store(CLI::App& sub, upload::HistoryQuery& query) {
  sub.add_option("--store", query.store,
                 "The S3-compatible store s3://BUCKET[/PREFIX]")
      ->type_name("URL")
      ->required();
  sub.add_option("--s3-endpoint", query.s3_endpoint,
                 "The S3 endpoint (default: $AWS_ENDPOINT_URL_S3, "
                 "$AWS_ENDPOINT_URL, else AWS)")
      ->type_name("URL");
  sub.add_option("--branch", query.branch,
                 "The branch whose pushes are read (default: the pull "
                 "request's base branch from the CI environment, else main)")
      ->type_name("BRANCH");
  sub.add_option("--repository", query.repository,
                 "OWNER/NAME (default: the repository of the current "
                 "checkout or CI job)")
      ->type_name("OWNER/NAME");
  add_parsed_option(sub, "--last", query.last,
                    count_parser(1, upload::kMaxHistoryRuns), "N",
                    "The newest N runs (default 100)");
  add_parsed_option(sub, "--budget", query.budget, parse_budget, "DURATION",
                    "Stop reading records after this long; the older ones "
                    "are counted as not read and the exit status is 1 "
                    "(default 120s)");
}

void add_history(CLI::App& app, CommandLine& out) {
  CLI::App* sub =
      add_command(app, "history", kHistoryDescription, Command::kHistory, out);
  HistoryOptions& options = out.history;
  add_history_store(*sub, options.query);
  sub->add_option("--out", options.out_dir,
                  "The output folder (default: runner-history)")
      ->type_name("DIR");
  add_enum_option(*sub, "--format", options.format, kHistoryFormats,
                  "What is printed: text (default), markdown (history.md), "
                  "json (history.json) or html (the path of index.html)");
  add_enum_option(*sub, "--metric", options.metric, kMetrics,
                  "The series: wall (default: the median time per iteration "
                  "with its interval), cpu (CPU time per iteration) or "
                  "instructions (per iteration), as each run's record has "
                  "them");
  add_parsed_option(*sub, "--min-change", options.detect.min_change,
                    parse_threshold, "PCT",
                    "Smallest step reported as a change point, in percent "
                    "(default 1)");
  add_parsed_option(*sub, "--compares", options.compares, count_parser(0, 100),
                    "N",
                    "Compare the runs around the newest N change points "
                    "(default 5; 0: none, nothing fetched)");
  sub->footer(
      "Exit status: 0 written, 1 written but incomplete (time budget) or an "
      "output\nnot written, 2 bad input or no run of the branch.");
}

void add_upload(CLI::App& app, CommandLine& out) {
  CLI::App* sub = add_command(
      app, "upload",
      "Uploads a profile folder: as a tar archive through CodSpeed's upload\n"
      "protocol (the metadata JSON POSTed to --upload-url, then the archive "
      "PUT to\nthe URL it answers), or with --store as a zstd-compressed tar "
      "into an\nS3-compatible store shared by CI machines, where 'runner "
      "compare --store'\nfinds it. The commit, branch and repository come "
      "from the CI environment\n(GitHub Actions, GitLab CI) or from git.",
      Command::kUpload, out);
  sub->add_option("FOLDER", out.upload.folder,
                  "The profile folder (default: the newest runner-profile.* "
                  "in the current directory)");
  add_destination_options(*sub, out.upload);
  sub->footer(
      "Transient failures (connection errors, timeouts, HTTP 5xx, 429 with "
      "Retry-After)\nare retried with backoff, 5 attempts in all; other "
      "refusals fail at once.\nExit status: 0 uploaded, 1 the upload failed, "
      "2 bad input.");
}

void add_doctor(CLI::App& app, CommandLine& out) {
  CLI::App* sub = add_command(
      app, "doctor",
      "Prints what this machine allows (perf_event_paranoid, "
      "kptr_restrict, mlock\nlimits, hardware PMU, a perf_event_open "
      "test of each sample type), what the runner\nwill do, and whether "
      "the machine holds the sampling rate of -F and --call-graph\n(the "
      "drain's estimated CPU with every CPU busy, the ring buffers under "
      "the\nlocked-memory limit), as run and exec warn before a run.",
      Command::kDoctor, out);
  add_rate_options(*sub, out.run, /*event=*/false);
}

// The subcommand the command line selected, or nullptr.
CLI::App* selected(CLI::App& app) {
  auto subs = app.get_subcommands();
  return subs.empty() ? nullptr : subs.front();
}

std::optional<int> usage_error(const CLI::App* sub, const std::string& what) {
  const std::string name =
      sub == nullptr ? "runner" : "runner " + sub->get_name();
  std::fprintf(stderr, "%s: %s (see '%s --help')\n", name.c_str(), what.c_str(),
               name.c_str());
  return 2;
}

// compare --store: one positional, HEAD (CLI11 put it in BASE), and at
// most one --base, a branch name.
std::optional<int> finish_store_compare(const CLI::App& sub, CommandLine& out) {
  compare::CompareOptions& options = out.compare;
  if (options.settings.paired)
    return usage_error(&sub, "--store and --paired do not go together");
  if (out.compare_base.empty() || !out.compare_head.empty() ||
      !options.head.empty())
    return usage_error(&sub,
                       "with --store, give one HEAD folder (usage: runner "
                       "compare --store s3://BUCKET [--base BRANCH] HEAD)");
  if (options.base.size() > 1)
    return usage_error(&sub, "with --store, --base is one branch name");
  options.head = {out.compare_base};
  return std::nullopt;
}

// compare --interleaved FOLDER: the folder is both sides.
std::optional<int> finish_interleaved_compare(const CLI::App& sub,
                                              CommandLine& out) {
  compare::CompareOptions& options = out.compare;
  if (options.settings.paired || out.compare_store)
    return usage_error(&sub, std::string("--interleaved and ") +
                                 (out.compare_store ? "--store" : "--paired") +
                                 " do not go together");
  if (out.compare_base.empty() || !out.compare_head.empty() ||
      !options.base.empty() || !options.head.empty())
    return usage_error(&sub,
                       "--interleaved takes one folder, written by 'runner "
                       "exec --interleave' (usage: runner compare "
                       "--interleaved FOLDER)");
  options.base = options.head = {out.compare_base};
  return std::nullopt;
}

// BASE and HEAD go first in their side's list; both sides must be given
// (in paired mode, one command each).
std::optional<int> finish_compare(const CLI::App& sub, CommandLine& out) {
  compare::CompareOptions& options = out.compare;
  if (options.interleaved) return finish_interleaved_compare(sub, out);
  if (out.compare_store) return finish_store_compare(sub, out);
  if (!out.compare_base.empty())
    options.base.insert(options.base.begin(), out.compare_base);
  if (!out.compare_head.empty())
    options.head.insert(options.head.begin(), out.compare_head);
  if (options.base.empty() || options.head.empty())
    return usage_error(&sub, std::string("missing ") +
                                 (options.base.empty() ? "BASE" : "HEAD") +
                                 " (usage: runner compare [OPTIONS] BASE "
                                 "HEAD)");
  if (options.settings.paired &&
      options.settings.metric != format::Metric::kWall)
    return usage_error(&sub,
                       "--paired times wall clock only (no counters): for "
                       "--metric cpu or instructions, use 'runner exec "
                       "--interleave' and 'runner compare --interleaved'");
  if (options.settings.paired &&
      (options.base.size() != 1 || options.head.size() != 1))
    return usage_error(&sub,
                       "--paired takes one command per side: runner compare "
                       "--paired 'BASE COMMAND' 'HEAD COMMAND'");
  return std::nullopt;
}

// What CLI11 left over: a prefix command's COMMAND, else unknown options and
// unexpected arguments. What follows `--` after a command is handed to the
// top level (the command has no positionals of its own).
std::optional<int> take_rest(CLI::App& app, CLI::App& sub, CommandLine& out) {
  std::vector<std::string> rest = sub.remaining();
  const bool after_dashes = rest.empty() || rest[0] == "--";
  if (rest.empty())
    rest = app.remaining();
  else if (rest[0] == "--")
    rest.erase(rest.begin());
  const bool takes_command = sub.get_prefix_command();
  if (!after_dashes && rest[0].size() > 1 && rest[0][0] == '-')
    return usage_error(&sub, "unknown option '" + rest[0] + "'");
  if (!takes_command && !rest.empty())
    return usage_error(&sub, "unexpected argument '" + rest[0] + "'");
  if (out.command == Command::kRun) out.run.command = rest;
  if (out.command == Command::kExec) out.exec.command = rest;
  if (out.command == Command::kCompare) return finish_compare(sub, out);
  return std::nullopt;
}

}  // namespace

std::unique_ptr<CLI::App> make_app(CommandLine& out) {
  auto app = std::make_unique<CLI::App>(
      "A walltime profiling agent for benchmarks: runs a benchmark, speaks "
      "the\nCodSpeed runner FIFO protocol with it, samples its process tree "
      "with\nperf_event_open inside benchmark windows and writes an "
      "upload-ready\nprofile folder.",
      "runner");
  app->formatter(std::make_shared<exec_harness::CommandUsageFormatter>());
  app->set_version_flag("-V,--version",
                        std::string("runner ") + RUNNER_VERSION);
  app->add_flag("--man", out.man, "Print the man page (roff)")->group("");
  // Unknown arguments are ours to report (take_rest), in one line.
  app->allow_extras();
  // At most one command: after it, a command name is an argument
  // (`runner run doctor` runs a program named doctor).
  app->require_subcommand(0, 1);
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_run(*app, out);
  add_exec(*app, out);
  add_report(*app, out);
  add_compare(*app, out);
  add_upload(*app, out);
  add_history(*app, out);
  add_doctor(*app, out);
  // After the commands, which would inherit it.
  app->footer(
      "Run 'runner <COMMAND> --help' for a command's options.\n"
      "Environment: RUNNER_LOG=debug or RUNNER_LOG=fifo:debug,profiler:info");
  return app;
}

std::optional<int> parse_command_line(int argc, const char* const* argv,
                                      CommandLine& out) {
  auto app = make_app(out);
  if (argc == 2 && std::string_view(argv[1]) == "help") {
    std::fputs(app->help().c_str(), stdout);
    return 0;
  }
  try {
    app->parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(selected(*app), e.what());
  }
  CLI::App* sub = selected(*app);
  // perf.pipedata's cmdline: the runner and its subcommand, never the
  // benchmark's arguments (which may carry secrets).
  if (sub != nullptr) out.run.sampler.cmdline = {argv[0], sub->get_name()};
  if (sub != nullptr) return take_rest(*app, *sub, out);
  if (out.man) {
    std::fputs(man_page(*app).c_str(), stdout);
    return 0;
  }
  const auto rest = app->remaining();
  if (!rest.empty() && rest[0].starts_with("-"))
    return usage_error(nullptr, "unknown option '" + rest[0] + "'");
  if (!rest.empty())
    return usage_error(nullptr, "unknown command '" + rest[0] + "'");
  std::fputs(app->help().c_str(), stderr);
  return 2;
}

}  // namespace runner::agent
