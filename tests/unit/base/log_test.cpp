#include "base/log.hpp"

#include <doctest/doctest.h>

#include "base/fs.hpp"
#include "tests/support/temp_dir.hpp"

using runner::base::LogLevel;

TEST_SUITE("base") {
  TEST_CASE("RUNNER_LOG sets a global level") {
    runner::base::configure_logging("debug");
    CHECK(runner::base::log_enabled("fifo", LogLevel::kDebug));
    runner::base::configure_logging("");
    CHECK_FALSE(runner::base::log_enabled("fifo", LogLevel::kDebug));
    CHECK(runner::base::log_enabled("fifo", LogLevel::kInfo));
  }

  TEST_CASE("RUNNER_LOG sets levels per category") {
    runner::base::configure_logging("fifo:debug,profiler:error,bogus");
    CHECK(runner::base::log_enabled("fifo", LogLevel::kDebug));
    CHECK_FALSE(runner::base::log_enabled("profiler", LogLevel::kWarning));
    CHECK(runner::base::log_enabled("profiler", LogLevel::kError));
    CHECK_FALSE(runner::base::log_enabled("symbols", LogLevel::kDebug));
    CHECK(runner::base::log_enabled("symbols", LogLevel::kInfo));
    runner::base::configure_logging("");
  }

  TEST_CASE("the log file receives debug lines") {
    runner::testing::TempDir dir;
    runner::base::configure_logging("error");
    REQUIRE(runner::base::set_log_file(dir.file("runner.log")));
    RUNNER_LOG("fifo", kDebug) << "frame " << 42;
    runner::base::close_log_file();
    runner::base::configure_logging("");
    auto text = runner::base::read_file(dir.file("runner.log"));
    REQUIRE(text);
    CHECK(*text == "[debug] fifo: frame 42\n");
  }
}
