// The paired local mode: two commands timed round by round in ABBA order
// (A B B A A B B A ...), so slow machine drift hits both sides equally;
// each pair is compared on its difference (compare_paired).
#pragma once

#include "base/base.hpp"
#include "compare/compare.hpp"
#include "format/format.hpp"

namespace runner::compare {

// Runs options.base[0] and options.head[0] (/bin/sh -c) for
// options.warmup_pairs + options.pairs pairs; the report has one
// benchmark named after the head command. Error: a command that cannot be
// started or exits non-zero (its status named).
base::Result<format::CompareReport> run_paired(const CompareOptions& options,
                                               std::ostream& err);

}  // namespace runner::compare
