#pragma once
namespace runner::agent { int run_main(int argc, char** argv); }
