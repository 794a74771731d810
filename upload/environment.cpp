// SCAFFOLD: replaced by the codspeed helper.
#include "upload/environment.hpp"

namespace runner::upload {

Environment current_environment() { return {}; }
std::optional<std::string> env_value(const Environment& env,
                                     const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}
MachineFacts collect_machine_facts() { return {}; }
base::Result<RunFacts> collect_run_facts(const std::string&,
                                         const Environment&) {
  return base::Error("SCAFFOLD: collect_run_facts");
}
std::string default_base_branch(const Environment&) { return "main"; }
const char* provider_name(CiProvider) { return "LOCAL"; }

}  // namespace runner::upload
