#include "base/fs.hpp"

#include <sys/stat.h>

#include <filesystem>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.hpp"

TEST_SUITE("base") {
  TEST_CASE("write_error names the path once") {
    using runner::base::Error;
    using runner::base::write_error;
    CHECK(write_error("/o/a.svg", Error("rename to /o/a.svg: EACCES")) ==
          "cannot write /o/a.svg: rename to /o/a.svg: EACCES");
    CHECK(write_error("/o/a.svg", Error("/o/a.svg: No space left")) ==
          "cannot write /o/a.svg: No space left");
  }

  TEST_CASE("write_file_atomic replaces the file and leaves no temp") {
    runner::testing::TempDir dir;
    std::string path = dir.file("a.json");
    REQUIRE(runner::base::write_file_atomic(path, std::string_view("one")));
    REQUIRE(runner::base::write_file_atomic(path, std::string_view("two")));
    auto text = runner::base::read_file(path);
    REQUIRE(text);
    CHECK(*text == "two");
    int entries = 0;
    for (auto& e : std::filesystem::directory_iterator(dir.path())) {
      (void)e;
      ++entries;
    }
    CHECK(entries == 1);
  }

  TEST_CASE("write_file_atomic into a missing directory fails cleanly") {
    runner::testing::TempDir dir;
    auto st = runner::base::write_file_atomic(dir.file("no/such/file"),
                                              std::string_view("x"));
    REQUIRE_FALSE(st);
    CHECK(st.error().code() == ENOENT);
  }

  TEST_CASE("make_directories creates nested folders") {
    runner::testing::TempDir dir;
    REQUIRE(runner::base::make_directories(dir.file("a/b/c")));
    CHECK(std::filesystem::is_directory(dir.file("a/b/c")));
    REQUIRE(runner::base::make_directories(dir.file("a/b/c")));
  }
}
