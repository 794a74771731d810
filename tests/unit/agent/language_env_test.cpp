#include "agent/language_env.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "agent/node_shim.hpp"
#include "base/base.hpp"
#include "tests/support/temp_dir.hpp"

namespace runner::agent {
namespace {

std::string value_of(const std::vector<std::string>& env,
                     const std::string& name) {
  for (const std::string& entry : env)
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  return "<unset>";
}

TEST_CASE("language support: an empty environment gets every variable") {
  LanguageSupport got = add_language_support({"PATH=/usr/bin"});
  CHECK(value_of(got.env, "PATH") == "/usr/bin");
  CHECK(value_of(got.env, "NODE_OPTIONS") ==
        "--perf-basic-prof --interpreted-frames-native-stack");
  CHECK(value_of(got.env, "JAVA_TOOL_OPTIONS") ==
        "-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions "
        "-XX:+DumpPerfMapAtExit");
  CHECK(value_of(got.env, "PYTHONPERFSUPPORT") == "1");
  CHECK(value_of(got.env, "PYTHON_PERF_JIT_SUPPORT") == "1");
  CHECK(got.changes.size() == 4);
  CHECK(language_support_line(got.changes) ==
        "runner: language support: NODE_OPTIONS+=--perf-basic-prof "
        "--interpreted-frames-native-stack; "
        "JAVA_TOOL_OPTIONS+=-XX:+PreserveFramePointer "
        "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit; "
        "PYTHONPERFSUPPORT=1; PYTHON_PERF_JIT_SUPPORT=1 "
        "(--no-language-support turns this off)");
}

TEST_CASE("language support: the user's values are extended, never replaced") {
  LanguageSupport got = add_language_support(
      {"NODE_OPTIONS=--max-old-space-size=100 --perf-basic-prof",
       "JAVA_TOOL_OPTIONS=-Xmx1g -XX:-PreserveFramePointer",
       "PYTHONPERFSUPPORT=0", "PYTHON_PERF_JIT_SUPPORT=0"});
  CHECK(value_of(got.env, "NODE_OPTIONS") ==
        "--max-old-space-size=100 --perf-basic-prof "
        "--interpreted-frames-native-stack");
  // The user turned frame pointers off: that stays their choice.
  CHECK(value_of(got.env, "JAVA_TOOL_OPTIONS") ==
        "-Xmx1g -XX:-PreserveFramePointer -XX:+UnlockDiagnosticVMOptions "
        "-XX:+DumpPerfMapAtExit");
  CHECK(value_of(got.env, "PYTHONPERFSUPPORT") == "0");
  CHECK(value_of(got.env, "PYTHON_PERF_JIT_SUPPORT") == "0");
  CHECK(std::count_if(got.env.begin(), got.env.end(), [](const auto& e) {
          return e.rfind("NODE_OPTIONS=", 0) == 0;
        }) == 1);
  CHECK(got.changes == std::vector<std::string>{
                           "NODE_OPTIONS+=--interpreted-frames-native-stack",
                           "JAVA_TOOL_OPTIONS+=-XX:+UnlockDiagnosticVMOptions "
                           "-XX:+DumpPerfMapAtExit"});
}

TEST_CASE("language support: nothing to add gives no summary line") {
  LanguageSupport got = add_language_support(
      {"NODE_OPTIONS=--perf-basic-prof --no-interpreted-frames-native-stack",
       "JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer "
       "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
       "PYTHONPERFSUPPORT=1", "PYTHON_PERF_JIT_SUPPORT=1"});
  CHECK(got.changes.empty());
  CHECK(language_support_line(got.changes).empty());
}

TEST_CASE(
    "node shim: runs the first node on PATH with the flags first, its path "
    "quoted; none without a node; removed with the object") {
  CHECK(node_shim_script("/opt/it's/node") ==
        "#!/bin/sh\n# runner: node with the V8 flags of a walltime run\n"
        "exec '/opt/it'\\''s/node' --perf-basic-prof --perf-prof "
        "--interpreted-frames-native-stack --allow-natives-syntax \"$@\"\n");
  testing::TempDir dir;
  const std::string bin = dir.file("bin");
  REQUIRE(base::make_directories(bin));
  auto none = NodeShim::create("relative:" + dir.path());
  REQUIRE(none.has_value());
  CHECK(*none == nullptr);
  REQUIRE(base::write_file_atomic(bin + "/node", "#!/bin/sh\n"));
  REQUIRE(::chmod((bin + "/node").c_str(), 0755) == 0);
  std::string shim_dir;
  {
    auto shim = NodeShim::create(dir.path() + ":" + bin + ":/usr/bin");
    REQUIRE(shim.has_value());
    REQUIRE(*shim != nullptr);
    CHECK((*shim)->real_node() == bin + "/node");
    shim_dir = (*shim)->dir();
    struct stat st {};
    REQUIRE(::stat((shim_dir + "/node").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(base::read_file(shim_dir + "/node").value_or("") ==
          node_shim_script(bin + "/node"));
  }
  CHECK(::access(shim_dir.c_str(), F_OK) != 0);
}

}  // namespace
}  // namespace runner::agent
