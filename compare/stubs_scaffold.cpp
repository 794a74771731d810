// SCAFFOLD: each function here moves to the file of the helper that owns it
// (verdict.cpp, render.cpp, paired.cpp, compare.cpp); this file is deleted.
#include "compare/compare.hpp"
#include "compare/paired.hpp"
#include "compare/verdict.hpp"

namespace runner::compare {

base::Result<format::CompareReport> run_paired(const CompareOptions&,
                                               std::ostream&) {
  return base::Error("paired mode: not implemented yet");
}
int run_compare(const CompareOptions&, std::ostream&, std::ostream& err) {
  err << "runner compare: not implemented yet\n";
  return 2;
}

}  // namespace runner::compare
