// The subcommands of `runner`. Each takes the arguments after its name and
// returns the process exit code; fatal errors are reported by the caller.
#pragma once

#include <string>
#include <vector>

namespace runner::agent {

int run_command(const std::vector<std::string>& args);
int exec_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int doctor_command(const std::vector<std::string>& args);

}  // namespace runner::agent
