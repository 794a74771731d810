// exec-harness: any command as a walltime benchmark (docs/exec.md).
//  - walltime_loop: the round loop (warm-up, round count from the walltime
//    options of format::WalltimeOptions), driven by exec-harness's main and
//    by the unit tests with fake rounds.
//  - options: the CLI11 declarations of the walltime options, shared by
//    `exec-harness` and `runner exec` so that both accept the same spellings.
#pragma once

#include "integrations/exec-harness/options.hpp"
#include "integrations/exec-harness/walltime_loop.hpp"
