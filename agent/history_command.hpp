// `runner history`: the agent's side of history/ (which builds the series,
// finds the change points and writes the outputs) and of the store
// (upload::StoreHistory): the branch's records are read, the runs around
// the newest change points fetched and compared with `runner compare`, and
// everything written into one output folder.
#pragma once

#include <cstddef>
#include <string>

#include "history/history.hpp"
#include "upload/upload.hpp"

namespace runner::agent {

struct HistoryOptions {
  upload::HistoryQuery query;
  std::string out_dir = "runner-history";
  history::OutputFormat format = history::OutputFormat::kText;
  history::DetectSettings detect;
  format::Metric metric = format::Metric::kWall;
  // The newest this many change points (of all benchmarks) get the
  // comparison of the two stored runs around them (archives fetched).
  size_t compares = 5;
};

// 0: the history was read and written; 1: it was written but is not the
// whole of what was asked (the time budget ran out before the records
// did), or an output could not be written; 2: bad input or no run of the
// branch in the store.
int history_command(const HistoryOptions& options);

}  // namespace runner::agent
