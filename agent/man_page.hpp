// The man page of `runner` (packaging/runner.1), generated from the CLI11
// declarations of agent/options.hpp so that it documents every option of
// every subcommand, hidden ones included. `runner --man` prints it; a test
// regenerates it and compares it with the committed file byte for byte.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace runner::agent {

// roff (man(7) macros) for the application and its subcommands.
std::string man_page(const CLI::App& app);

}  // namespace runner::agent
