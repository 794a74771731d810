// NodeShim: the `node` a run's benchmark finds first on its PATH. CodSpeed's
// Node integrations (@codspeed/core, behind @codspeed/vitest-plugin,
// tinybench-plugin, benchmark.js-plugin) check that process.execArgv holds
// the V8 flags of a walltime run (--interpreted-frames-native-stack,
// --allow-natives-syntax, --perf-prof, --perf-basic-prof) and print
// "[CodSpeed] missing required flags" otherwise; flags given through
// NODE_OPTIONS are not in execArgv (and --allow-natives-syntax is not
// allowed there). So, as CodSpeed's runner does, a script in a private
// temporary directory runs the real node (the first one on the PATH) with
// those flags on its command line; processes it forks (child_process.fork,
// vitest's workers) inherit them through execArgv. A node started by its
// full path does not go through it (NODE_OPTIONS still applies). The
// directory is removed with the object.
#pragma once

#include <memory>
#include <string>

#include "base/base.hpp"

namespace runner::agent {

inline constexpr const char* kNodeShimFlags =
    "--perf-basic-prof --perf-prof --interpreted-frames-native-stack "
    "--allow-natives-syntax";

class NodeShim {
 public:
  // The shim for the first executable `node` in `path` (a PATH value), or
  // nullptr when there is none.
  static base::Result<std::unique_ptr<NodeShim>> create(
      const std::string& path);
  ~NodeShim();
  NodeShim(const NodeShim&) = delete;
  NodeShim& operator=(const NodeShim&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& real_node() const { return real_node_; }

 private:
  NodeShim(std::string dir, std::string real_node)
      : dir_(std::move(dir)), real_node_(std::move(real_node)) {}
  std::string dir_, real_node_;
};

// The script: runs `real_node` with kNodeShimFlags, then its arguments.
std::string node_shim_script(const std::string& real_node);

}  // namespace runner::agent
