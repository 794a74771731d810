// Which language runtime a benchmark command starts, as far as its first
// word tells: the program's name (through symlinks), or the interpreter of
// a script's "#!" line (`#!/usr/bin/env python3` too; base::shebang_words
// reads it). Used to give interpreters the stack copy their frames need
// (choose_stack_size()). A program that is missing, unreadable or not a
// regular file is kOther.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/run_options.hpp"

namespace runner::agent {

enum class CommandRuntime { kOther, kCPython, kJvm };

// The stack copy of dwarf mode for a command that runs CPython or a JVM,
// when the user gave no SIZE: each Python call adds an interpreter frame
// and a trampoline of several hundred bytes, and the JVM's compiled and
// interpreted frames are large too, so 8 KiB ends inside the interpreter.
inline constexpr uint32_t kInterpreterStackSize = 32768;

// `argv`: the command as given; `path_env`: PATH to resolve argv[0].
CommandRuntime command_runtime(const std::vector<std::string>& argv,
                               const std::string& path_env);
// The runtime a program name alone says ("python3.12" -> kCPython).
CommandRuntime runtime_of_name(const std::string& program);
// "CPython", "a JVM", "".
const char* runtime_name(CommandRuntime runtime);

// DWARF mode with no SIZE of the user's: kInterpreterStackSize when one of
// `commands` runs CPython or a JVM, saying why in
// options.stack_size_reason; the ring buffers keep the default stack's
// size unless --mmap-size gave one.
void choose_stack_size(RunOptions& options,
                       const std::vector<std::vector<std::string>>& commands,
                       const std::string& path_env);

}  // namespace runner::agent
