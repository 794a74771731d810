// /proc/<pid>/stat (proc(5)): one line of space-separated fields, the second
// of which, the command name in parentheses, may itself hold spaces and
// parentheses. Only the fields that say where a process's initial stack
// area lies are read here (what the profiler blanks in stack copies).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace runner::format {

// Fields 28 (startstack: the address of argc, the lowest byte of the
// initial stack area) and 48-51 (where the argv and environment strings
// lie, 0 on kernels before 3.5). A field the kernel hides for lack of
// permission reads as 0.
struct ProcStackFields {
  uint64_t start_stack = 0;
  uint64_t arg_start = 0, arg_end = 0, env_start = 0, env_end = 0;
};

// nullopt when the line has no closing parenthesis or fewer than 28 fields,
// or when a field that is there is not a decimal number.
std::optional<ProcStackFields> parse_proc_stat_stack(std::string_view line);

// Where blanking must begin for a process: start_stack, lowered to where
// the argv or environment strings begin when they lie below it (a process
// may move them with prctl(PR_SET_MM_ARG_START)), so that the strings are
// covered whatever the kernel reports. 0 when start_stack is 0 (unknown).
uint64_t initial_stack_floor(const ProcStackFields& fields);

}  // namespace runner::format
