#include "agent/command_runtime.hpp"

#include <filesystem>
#include <regex>

#include "base/base.hpp"

namespace runner::agent {
namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The interpreter a "#!" line names, with env's program in its place
// (`#!/usr/bin/env -S python3 -u` names python3); "" when none.
std::string shebang_program(const std::vector<std::string>& words) {
  if (words.empty() || base_name(words.front()) != "env")
    return words.empty() ? "" : words.front();
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i].find('=') != std::string::npos) continue;  // NAME=value
    if (!words[i].starts_with("-")) return words[i];
  }
  return "";
}

// The program's own name and, through symlinks, its file's.
CommandRuntime runtime_of_file(const std::string& path) {
  if (auto by_name = runtime_of_name(base_name(path));
      by_name != CommandRuntime::kOther)
    return by_name;
  std::error_code ec;
  const auto target = std::filesystem::canonical(path, ec);
  return ec ? CommandRuntime::kOther : runtime_of_name(target.filename());
}

}  // namespace

CommandRuntime runtime_of_name(const std::string& program) {
  static const std::regex kPython(R"(python(\d+(\.\d+)?)?[a-z]?)");
  if (std::regex_match(program, kPython)) return CommandRuntime::kCPython;
  if (program == "java") return CommandRuntime::kJvm;
  return CommandRuntime::kOther;
}

CommandRuntime command_runtime(const std::vector<std::string>& argv,
                               const std::string& path_env) {
  if (argv.empty() || argv[0].empty()) return CommandRuntime::kOther;
  if (auto by_name = runtime_of_name(base_name(argv[0]));
      by_name != CommandRuntime::kOther)
    return by_name;
  auto found = base::find_executable(argv[0], path_env);
  if (!found) return CommandRuntime::kOther;
  if (auto by_file = runtime_of_file(*found); by_file != CommandRuntime::kOther)
    return by_file;
  const std::string interpreter = shebang_program(base::shebang_words(*found));
  if (interpreter.empty()) return CommandRuntime::kOther;
  if (interpreter.find('/') == std::string::npos) {
    auto resolved = base::find_executable(interpreter, path_env);
    return resolved ? runtime_of_file(*resolved) : runtime_of_name(interpreter);
  }
  return runtime_of_file(interpreter);
}

const char* runtime_name(CommandRuntime runtime) {
  switch (runtime) {
    case CommandRuntime::kCPython:
      return "CPython";
    case CommandRuntime::kJvm:
      return "a JVM";
    case CommandRuntime::kOther:
      break;
  }
  return "";
}

void choose_stack_size(RunOptions& options,
                       const std::vector<std::vector<std::string>>& commands,
                       const std::string& path_env) {
  profiler::SamplerOptions& sampler = options.sampler;
  if (sampler.call_graph != profiler::CallGraphMode::kDwarf ||
      options.stack_size_given || sampler.stack_size >= kInterpreterStackSize)
    return;
  for (const auto& command : commands) {
    const CommandRuntime runtime = command_runtime(command, path_env);
    if (runtime == CommandRuntime::kOther) continue;
    options.stack_size_reason =
        "call graph dwarf," + std::to_string(kInterpreterStackSize) +
        ": the benchmark runs " + runtime_name(runtime) +
        ", whose frames outgrow " + std::to_string(sampler.stack_size) +
        " bytes of stack (--call-graph dwarf,SIZE sets another size)";
    // The buffers stay what the default stack would have had (at 997 Hz 4
    // MiB, 126 ms of 32 KiB samples, ample for a drain every 30 ms), so
    // that they still fit an ordinary user's locked-memory limit.
    if (sampler.mmap_size == 0)
      sampler.mmap_size = profiler::default_mmap_size(sampler);
    sampler.stack_size = kInterpreterStackSize;
    return;
  }
}

}  // namespace runner::agent
