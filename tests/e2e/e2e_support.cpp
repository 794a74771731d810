#include "tests/e2e/e2e_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>

#include <doctest/doctest.h>

#include "base/child_process.hpp"
#include "base/fs.hpp"
#include "tests/support/perf_events.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::testing {

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env,
                          const std::string& cwd, int timeout_s) {
  ProcessResult result;
  TempDir scratch;
  const std::string out_path = scratch.file("out");
  const std::string err_path = scratch.file("err");
  int out_fd =
      ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  int err_fd =
      ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  REQUIRE(out_fd >= 0);
  REQUIRE(err_fd >= 0);
  base::SpawnOptions opts;
  opts.argv = argv;
  // An inherited variable the test passes again is replaced, not
  // duplicated (getenv() would return the inherited, first one).
  auto passed = [&extra_env](std::string_view entry) {
    std::string_view name = entry.substr(0, entry.find('='));
    for (const auto& kv : extra_env)
      if (std::string_view(kv).substr(0, kv.find('=')) == name) return true;
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (!passed(*e)) env.emplace_back(*e);
  for (const auto& kv : extra_env) env.push_back(kv);
  opts.env = env;
  opts.cwd = cwd;
  opts.stdout_fd = out_fd;
  opts.stderr_fd = err_fd;
  opts.stdin_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  auto child = base::ChildProcess::spawn(opts);
  ::close(opts.stdin_fd);
  if (!child) {
    result.err = child.error().what();
  } else {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (true) {
      auto st = child->try_wait();
      if (!st) break;
      if (st->has_value()) {
        result.exit_code = (*st)->shell_code();
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        result.timed_out = true;
        (void)child->send_signal(SIGKILL);
        auto s = child->wait();
        result.exit_code = s ? s->shell_code() : -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ::close(out_fd);
  ::close(err_fd);
  result.out = base::read_file(out_path).value_or("");
  result.err += base::read_file(err_path).value_or("");
  return result;
}

std::vector<std::string> runner_argv(const std::string& subcommand,
                                     const std::string& folder,
                                     const std::string& fifo_dir,
                                     const std::vector<std::string>& extra,
                                     const std::vector<std::string>& command) {
  std::vector<std::string> argv = {binary("RUNNER_BIN"), subcommand,
                                   "--profile-folder",   folder,
                                   "--fifo-dir",         fifo_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  if (!command.empty()) argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::string binary(const char* var) {
  const char* path = std::getenv(var);
  REQUIRE_MESSAGE(path != nullptr, "environment variable ", var, " not set");
  return path;
}

ProcessResult run_runner(const std::vector<std::string>& args,
                         const std::vector<std::string>& env, int timeout_s) {
  std::vector<std::string> argv{binary("RUNNER_BIN")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, env, "", timeout_s);
}

nlohmann::json read_json_file(const std::string& path) {
  auto text = base::read_file(path);
  REQUIRE_MESSAGE(text.has_value(), "cannot read ", path);
  return nlohmann::json::parse(*text);
}

nlohmann::json read_msgpack_file(const std::string& path) {
  auto text = base::read_file(path);
  REQUIRE_MESSAGE(text.has_value(), "cannot read ", path);
  return nlohmann::json::from_msgpack(*text);
}

bool file_exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  return names;
}

}  // namespace runner::testing

namespace runner::testing {
namespace {

bool is_pid_tid(const std::string& token) {
  size_t slash = token.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= token.size())
    return false;
  for (size_t i = 0; i < token.size(); ++i)
    if (i != slash && !std::isdigit(static_cast<unsigned char>(token[i])))
      return false;
  return true;
}

uint64_t parse_time_ns(std::string token) {
  if (!token.empty() && token.back() == ':') token.pop_back();
  size_t dot = token.find('.');
  if (dot == std::string::npos) return std::stoull(token) * 1000000000ull;
  std::string frac = token.substr(dot + 1);
  frac.resize(9, '0');
  return std::stoull(token.substr(0, dot)) * 1000000000ull + std::stoull(frac);
}

}  // namespace

std::vector<PerfSample> parse_perf_script(const std::string& text) {
  std::vector<PerfSample> samples;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty()) continue;
    std::vector<std::string> tokens;
    size_t p = 0;
    while (p < line.size()) {
      size_t s = line.find_first_not_of(" \t", p);
      if (s == std::string::npos) break;
      size_t e = line.find_first_of(" \t", s);
      if (e == std::string::npos) e = line.size();
      tokens.push_back(line.substr(s, e - s));
      p = e;
    }
    size_t k = 0;
    while (k < tokens.size() &&
           !(is_pid_tid(tokens[k]) && k + 1 < tokens.size() &&
             tokens[k + 1].back() == ':'))
      ++k;
    if (k == tokens.size()) {
      // Not a header: a frame line of the current sample.
      if (samples.empty() || tokens.empty() ||
          tokens[0].find_first_not_of("0123456789abcdef") != std::string::npos)
        continue;
      size_t i = line.find_first_not_of(" \t");
      size_t sp = line.find(' ', i);
      PerfFrame frame;
      frame.ip = std::stoull(line.substr(i, sp - i), nullptr, 16);
      std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
      size_t paren = rest.rfind(" (");
      if (paren != std::string::npos && rest.back() == ')') {
        frame.dso = rest.substr(paren + 2, rest.size() - paren - 3);
        rest.resize(paren);
      }
      frame.sym = rest;
      samples.back().frames.push_back(std::move(frame));
      continue;
    }
    PerfSample sample;
    for (size_t j = 0; j < k; ++j) sample.comm += (j ? " " : "") + tokens[j];
    size_t slash = tokens[k].find('/');
    sample.pid = std::stoi(tokens[k].substr(0, slash));
    sample.tid = std::stoi(tokens[k].substr(slash + 1));
    sample.time_ns = parse_time_ns(tokens[k + 1]);
    // Side-band records printed by --show-mmap-events etc. are not samples.
    if (k + 2 < tokens.size() && tokens[k + 2].rfind("PERF_RECORD_", 0) == 0)
      continue;
    // `-G` (no callchain): "ip sym" follow the time on the same line.
    if (k + 2 < tokens.size() && tokens[k + 2].find_first_not_of(
                                     "0123456789abcdef") == std::string::npos) {
      PerfFrame frame;
      frame.ip = std::stoull(tokens[k + 2], nullptr, 16);
      for (size_t j = k + 3; j < tokens.size(); ++j)
        frame.sym += (j > k + 3 ? " " : "") + tokens[j];
      size_t paren = frame.sym.rfind(" (");
      if (paren != std::string::npos && frame.sym.back() == ')') {
        frame.dso = frame.sym.substr(paren + 2, frame.sym.size() - paren - 3);
        frame.sym.resize(paren);
      }
      sample.frames.push_back(std::move(frame));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

ProcessResult perf_script(const std::string& pipedata,
                          const std::vector<std::string>& extra) {
  // -f: the file may belong to another user (unprivileged runs);
  // --no-inline: one frame per address, as `runner report` without --inline.
  std::vector<std::string> argv = {
      "perf",        "script", "-f",
      "-i",          pipedata, "--ns",
      "--no-inline", "-F",     "comm,pid,tid,time,ip,sym,dso"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  ProcessResult r = run_process(argv);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

}  // namespace runner::testing
