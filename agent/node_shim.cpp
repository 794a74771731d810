#include "agent/node_shim.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace runner::agent {
namespace {

// The first executable regular file named `node` in the PATH value's
// absolute directories (never the working directory).
std::string find_node(const std::string& path) {
  std::istringstream dirs(path);
  std::string dir, absolute;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && dir[0] == '/')
      absolute += (absolute.empty() ? "" : ":") + dir;
  if (absolute.empty()) return {};
  auto found = base::find_executable("node", absolute);
  return found ? *found : std::string();
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string node_shim_script(const std::string& real_node) {
  return "#!/bin/sh\n# runner: node with the V8 flags of a walltime "
         "run\nexec " +
         shell_quoted(real_node) + " " + kNodeShimFlags + " \"$@\"\n";
}

base::Result<std::unique_ptr<NodeShim>> NodeShim::create(
    const std::string& path) {
  const std::string real_node = find_node(path);
  if (real_node.empty()) return std::unique_ptr<NodeShim>();
  std::string dir = base::temp_directory() + "/runner-node.XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr)
    return base::errno_error("cannot create " + dir);
  std::unique_ptr<NodeShim> shim(new NodeShim(dir, real_node));
  const std::string file = dir + "/node";
  const std::string script = node_shim_script(real_node);
  base::UniqueFd fd(::open(file.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           0700));
  if (!fd.valid() || ::write(fd.get(), script.data(), script.size()) !=
                         static_cast<ssize_t>(script.size()))
    return base::errno_error("cannot write " + file);
  return shim;
}

NodeShim::~NodeShim() {
  ::unlink((dir_ + "/node").c_str());
  ::rmdir(dir_.c_str());
}

}  // namespace runner::agent
