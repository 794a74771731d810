#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/skip.hpp"

namespace runner::testing {
namespace {

struct SkipLog {
  std::mutex mutex;
  std::string current_case;
  std::vector<std::string> lines;
};

SkipLog& skip_log() {
  static SkipLog log;
  return log;
}

// Tracks the running case's name and prints the skips when the binary ends.
struct SkipListener : doctest::IReporter {
  explicit SkipListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {
    auto& log = skip_log();
    std::lock_guard lock(log.mutex);
    if (log.lines.empty()) return;
    std::printf("%zu test case(s) skipped:\n", log.lines.size());
    for (const auto& line : log.lines) std::printf("  %s\n", line.c_str());
    std::fflush(stdout);
  }
  void test_case_start(const doctest::TestCaseData& data) override {
    auto& log = skip_log();
    std::lock_guard lock(log.mutex);
    log.current_case = data.m_name;
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

void note_skip(const std::string& reason) {
  auto& log = skip_log();
  std::lock_guard lock(log.mutex);
  std::string line = log.current_case + ": " + reason;
  std::printf("SKIP %s\n", line.c_str());
  std::fflush(stdout);
  log.lines.push_back(std::move(line));
}

}  // namespace runner::testing

REGISTER_LISTENER("runner-skips", 1, runner::testing::SkipListener);
