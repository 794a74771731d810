// The subcommands of `runner`, run on the options agent/options.hpp parsed.
// Each returns the process exit code (2 for usage errors found only now,
// such as a missing command); fatal errors are reported by the caller.
#pragma once

#include "agent/session.hpp"
#include "agent/upload_command.hpp"
#include "compare/compare.hpp"
#include "format/format.hpp"
#include "report/report.hpp"

namespace runner::agent {

// With upload.requested(), the folder is uploaded at the end of the run.
int run_command(RunOptions options, const UploadOptions& upload = {});
// `target`: the command line's benchmark (its command empty: the benchmarks
// of runner.yml / codspeed.yml in the working directory).
int exec_command(RunOptions options, const format::ExecTarget& target,
                 const UploadOptions& upload = {});
int report_command(report::ReportOptions options);
int compare_command(const compare::CompareOptions& options);
// The machine's checks, and the capacity for `sampler` (doctor's -F,
// --call-graph and --mmap-size).
int doctor_command(const profiler::SamplerOptions& sampler);

}  // namespace runner::agent
