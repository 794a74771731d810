// Where an upload comes from: the machine, the checkout, the CI job (see
// environment.hpp).
#include "upload/environment.hpp"

#include <pwd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <sstream>

#include "base/base.hpp"
#include "format/format.hpp"

extern char** environ;

namespace runner::upload {

Environment current_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos)
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

std::optional<std::string> env_value(const Environment& env,
                                     const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

namespace {

constexpr uint64_t kMaxSystemFile = 4u << 20;

std::string read_system_file(const std::string& path) {
  base::ReadOptions options = base::following_symlinks();  // os-release is one
  options.max_size = kMaxSystemFile;
  return base::read_file(path, options).value_or("");
}

// KEY=value or KEY="value" of an os-release file.
std::string os_release_value(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + "=", 0) != 0) continue;
    std::string value = line.substr(key.size() + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\''))
      value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

// "key\t: value" of the first CPU in /proc/cpuinfo.
std::string cpuinfo_value(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) break;  // the first processor's block ends
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name != key) continue;
    const size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

uint64_t memory_gb(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    const double kib = std::strtod(line.c_str() + 9, nullptr);
    return static_cast<uint64_t>(std::llround(kib / (1024.0 * 1024.0)));
  }
  return 0;
}

}  // namespace

MachineFacts collect_machine_facts() {
  MachineFacts m;
  std::string os_release = read_system_file("/etc/os-release");
  if (os_release.empty()) os_release = read_system_file("/usr/lib/os-release");
  m.os = os_release_value(os_release, "ID");
  m.os_version = os_release_value(os_release, "VERSION_ID");
  struct utsname u {};
  if (::uname(&u) == 0) {
    m.arch = u.machine;
    m.host = u.nodename;
  }
  if (const passwd* pw = ::getpwuid(::geteuid())) m.user = pw->pw_name;
  const std::string cpuinfo = read_system_file("/proc/cpuinfo");
  m.cpu_brand = cpuinfo_value(cpuinfo, "model name");
  m.cpu_name = "cpu0";
  m.cpu_vendor_id = cpuinfo_value(cpuinfo, "vendor_id");
  m.cpu_flags = words(cpuinfo_value(cpuinfo, "flags"));
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpu_cores = online > 0 ? static_cast<uint32_t>(online) : 0;
  m.total_memory_gb = memory_gb(read_system_file("/proc/meminfo"));
  return m;
}

const char* provider_name(CiProvider provider) {
  switch (provider) {
    case CiProvider::kGitHubActions:
      return "GITHUB_ACTIONS";
    case CiProvider::kGitLabCi:
      return "GITLAB_CI";
    case CiProvider::kLocal:
      break;
  }
  return "LOCAL";
}

std::string default_base_branch(const Environment& env) {
  if (auto ref = env_value(env, "GITHUB_BASE_REF")) return *ref;
  if (auto ref = env_value(env, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"))
    return *ref;
  return "main";
}

}  // namespace runner::upload
