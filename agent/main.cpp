#include "agent/cli.hpp"
int main(int argc, char** argv) { return runner::agent::run_main(argc, argv); }
