#include "agent/language_env.hpp"

#include <algorithm>
#include <sstream>
#include <string_view>

namespace runner::agent {
namespace {

// A space-separated option list (NODE_OPTIONS, JAVA_TOOL_OPTIONS) extended
// with the options it lacks.
struct ListVariable {
  std::string_view name;
  std::string_view options;  // space-separated
};

// A switch (PYTHONPERFSUPPORT): set when absent, kept when the user set it.
struct SwitchVariable {
  std::string_view name;
  std::string_view value;
};

constexpr ListVariable kLists[] = {
    {"NODE_OPTIONS", "--perf-basic-prof --interpreted-frames-native-stack"},
    {"JAVA_TOOL_OPTIONS",
     "-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions "
     "-XX:+DumpPerfMapAtExit"},
};

constexpr SwitchVariable kSwitches[] = {
    {"PYTHONPERFSUPPORT", "1"},
    {"PYTHON_PERF_JIT_SUPPORT", "1"},
};

// The entry of `name` in `env`, or nullptr.
std::string* find_entry(std::vector<std::string>& env, std::string_view name) {
  for (std::string& entry : env)
    if (entry.size() > name.size() && entry[name.size()] == '=' &&
        std::string_view(entry).starts_with(name))
      return &entry;
  return nullptr;
}

// The option that turns `option` off: -XX:-Name for -XX:+Name, --no-name
// for --name.
std::string negation_of(std::string_view option) {
  if (option.starts_with("-XX:+"))
    return "-XX:-" + std::string(option.substr(5));
  if (option.starts_with("--")) return "--no-" + std::string(option.substr(2));
  return {};
}

// Whether the list already has the option, or the user turned it off.
bool decided(std::string_view list, std::string_view option) {
  const std::string negation = negation_of(option);
  std::istringstream in{std::string(list)};
  std::string token;
  while (in >> token) {
    // "--perf-basic-prof=..." style values count as the option itself.
    std::string_view name = std::string_view(token).substr(
        0, std::min(token.find('='), token.size()));
    if (name == option || (!negation.empty() && name == negation)) return true;
  }
  return false;
}

void extend_list(const ListVariable& var, LanguageSupport& out) {
  std::string* entry = find_entry(out.env, var.name);
  std::string value =
      entry != nullptr ? entry->substr(var.name.size() + 1) : std::string();
  std::string added;
  std::istringstream options{std::string(var.options)};
  std::string option;
  while (options >> option) {
    if (decided(value, option)) continue;
    added += (added.empty() ? "" : " ") + option;
  }
  if (added.empty()) return;
  value += (value.empty() ? "" : " ") + added;
  std::string line = std::string(var.name) + "=" + value;
  if (entry != nullptr) {
    *entry = std::move(line);
  } else {
    out.env.push_back(std::move(line));
  }
  out.changes.push_back(std::string(var.name) + "+=" + added);
}

}  // namespace

LanguageSupport add_language_support(std::vector<std::string> env) {
  LanguageSupport out{std::move(env), {}};
  for (const ListVariable& var : kLists) extend_list(var, out);
  for (const SwitchVariable& var : kSwitches) {
    if (find_entry(out.env, var.name) != nullptr) continue;
    std::string line = std::string(var.name) + "=" + std::string(var.value);
    out.changes.push_back(line);
    out.env.push_back(std::move(line));
  }
  return out;
}

std::string language_support_line(const std::vector<std::string>& changes) {
  if (changes.empty()) return {};
  std::string line = "runner: language support:";
  for (const std::string& change : changes) line += " " + change + ";";
  line.back() = ' ';
  return line + "(--no-language-support turns this off)";
}

}  // namespace runner::agent
