// diff_svg OUT TITLE BASE.folded HEAD.folded: writes
// render_diff_flamegraph of two .folded files (as `runner report` writes
// them) to OUT, for the browser test of the differential flamegraph.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "base/base.hpp"
#include "base/fs.hpp"
#include "report/report.hpp"

namespace {

std::vector<runner::report::FoldedStack> read_folded(const std::string& path) {
  auto text = runner::base::read_file(path);
  if (!text) throw std::runtime_error(text.error().what());
  std::vector<runner::report::FoldedStack> stacks;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    runner::report::FoldedStack stack;
    stack.count = std::stoull(line.substr(space + 1));
    std::istringstream frames(line.substr(0, space));
    for (std::string frame; std::getline(frames, frame, ';');)
      stack.frames.push_back(frame);
    stacks.push_back(std::move(stack));
  }
  return stacks;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: diff_svg OUT TITLE BASE.folded HEAD.folded\n");
    return 2;
  }
  try {
    const std::string svg = runner::report::render_diff_flamegraph(
        argv[2], read_folded(argv[3]), read_folded(argv[4]));
    if (auto st = runner::base::write_file_atomic(argv[1], svg); !st) {
      std::fprintf(stderr, "diff_svg: %s\n", st.error().what().c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "diff_svg: %s\n", e.what());
    return 1;
  }
  return 0;
}
