// Command-line specs of every subcommand (help text lives here).
#pragma once

#include "agent/args.hpp"

namespace runner::agent {

const CommandSpec& run_spec();
const CommandSpec& exec_spec();
const CommandSpec& report_spec();
const CommandSpec& doctor_spec();

}  // namespace runner::agent
