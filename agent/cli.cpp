#include "agent/cli.hpp"
namespace runner::agent { int run_main(int, char**) { return 0; } }
