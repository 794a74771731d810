#include "agent/command_runtime.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/base.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::agent {
namespace {

// An executable file of `text` at `path`.
void write_program(const std::string& path, const std::string& text) {
  REQUIRE(base::write_file_atomic(path, text));
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
}

TEST_CASE("command runtime: the program's name") {
  CHECK(runtime_of_name("python") == CommandRuntime::kCPython);
  CHECK(runtime_of_name("python3") == CommandRuntime::kCPython);
  CHECK(runtime_of_name("python3.12") == CommandRuntime::kCPython);
  CHECK(runtime_of_name("python3.13t") == CommandRuntime::kCPython);
  CHECK(runtime_of_name("java") == CommandRuntime::kJvm);
  CHECK(runtime_of_name("python3-config") == CommandRuntime::kOther);
  CHECK(runtime_of_name("pythonista") == CommandRuntime::kOther);
  CHECK(runtime_of_name("node") == CommandRuntime::kOther);
  CHECK(runtime_of_name("javac") == CommandRuntime::kOther);
  // Only the first word counts, through PATH or not.
  CHECK(command_runtime({"/opt/x/bin/python3.12", "a.py"}, "") ==
        CommandRuntime::kCPython);
  CHECK(command_runtime({"java", "-jar", "b.jar"}, "/nonexistent") ==
        CommandRuntime::kJvm);
  CHECK(command_runtime({"./bench", "python3"}, "/nonexistent") ==
        CommandRuntime::kOther);
  CHECK(command_runtime({}, "") == CommandRuntime::kOther);
  CHECK(command_runtime({""}, "") == CommandRuntime::kOther);
}

TEST_CASE("command runtime: a script's #! line, a symlink's target") {
  runner::testing::TempDir dir;
  // The interpreters the scripts name (found in PATH by name).
  write_program(dir.file("python3.11"),
                "\x7f"
                "ELF");
  write_program(dir.file("java"),
                "\x7f"
                "ELF");
  const std::string path = dir.path();
  write_program(dir.file("pytest"), "#!" + dir.file("python3.11") + "\nx\n");
  write_program(dir.file("via-env"), "#!/usr/bin/env python3.11\n");
  write_program(dir.file("env-s"), "#!/usr/bin/env -S PYTHONX=1 java -u\n");
  write_program(dir.file("plain"), "#!/bin/sh\nexec python3 \"$@\"\n");
  write_program(dir.file("no-line"), "python3\n");
  write_program(dir.file("empty"), "");
  CHECK(command_runtime({"pytest"}, path) == CommandRuntime::kCPython);
  CHECK(command_runtime({dir.file("via-env")}, path) ==
        CommandRuntime::kCPython);
  CHECK(command_runtime({dir.file("env-s")}, path) == CommandRuntime::kJvm);
  CHECK(command_runtime({dir.file("plain")}, path) == CommandRuntime::kOther);
  CHECK(command_runtime({dir.file("no-line")}, path) == CommandRuntime::kOther);
  CHECK(command_runtime({dir.file("empty")}, path) == CommandRuntime::kOther);
  // A link named otherwise, to an interpreter.
  REQUIRE(::symlink(dir.file("python3.11").c_str(),
                    dir.file("bench").c_str()) == 0);
  CHECK(command_runtime({dir.file("bench")}, path) == CommandRuntime::kCPython);
  // Not a regular file: never read (a FIFO would block an open for read).
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0755) == 0);
  CHECK(command_runtime({dir.file("fifo")}, path) == CommandRuntime::kOther);
  CHECK(command_runtime({dir.file("missing")}, path) == CommandRuntime::kOther);
}

TEST_CASE("command runtime: the stack size for interpreters") {
  RunOptions options;
  const uint32_t default_size = options.sampler.stack_size;
  REQUIRE(default_size < kInterpreterStackSize);
  choose_stack_size(options, {{"/bin/true"}}, "");
  CHECK(options.sampler.stack_size == default_size);
  CHECK(options.stack_size_reason.empty());

  // One command of several is enough.
  choose_stack_size(options, {{"/bin/true"}, {"/usr/bin/python3", "b.py"}}, "");
  CHECK(options.sampler.stack_size == kInterpreterStackSize);
  CHECK(options.sampler.mmap_size ==
        profiler::default_mmap_size(profiler::SamplerOptions{}));
  CHECK(options.stack_size_reason ==
        "call graph dwarf,32768: the benchmark runs CPython, whose frames "
        "outgrow 8192 bytes of stack (--call-graph dwarf,SIZE sets another "
        "size)");

  RunOptions given;  // --call-graph dwarf,4096: the user's
  given.sampler.stack_size = 4096;
  given.stack_size_given = true;
  given.sampler.mmap_size = 0;
  choose_stack_size(given, {{"java"}}, "");
  CHECK(given.sampler.stack_size == 4096);
  CHECK(given.sampler.mmap_size == 0);
  RunOptions sized;  // --mmap-size 1M: the user's
  sized.sampler.mmap_size = 1 << 20;
  choose_stack_size(sized, {{"java"}}, "");
  CHECK(sized.sampler.stack_size == kInterpreterStackSize);
  CHECK(sized.sampler.mmap_size == (1 << 20));
  CHECK(given.stack_size_reason.empty());

  RunOptions fp;
  fp.sampler.call_graph = profiler::CallGraphMode::kFramePointer;
  choose_stack_size(fp, {{"java"}}, "");
  CHECK(fp.sampler.stack_size == default_size);
  CHECK(fp.stack_size_reason.empty());
}

}  // namespace
}  // namespace runner::agent
