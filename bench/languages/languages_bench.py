#!/usr/bin/python3
"""How complete the stacks of JIT and interpreted programs are: runner
against perf, on the same programs, in one run.

The programs are tests/e2e/programs/languages/ (Node, CPython 3.12/3.13,
Java: named functions, JSON parsing, regular expressions). Each is profiled
four ways, at 997 Hz:

  runner dwarf   `runner exec --call-graph dwarf` (the default), then
                 `runner report --format perf-script`
  runner fp      the same with --call-graph fp
  perf dwarf     `perf record -k 1 --call-graph dwarf,8192`, then
                 `perf inject --jit` when the program wrote a jitdump, then
                 `perf script`
  perf fp        `perf record -k 1 -g` (the same post-processing)

perf runs get the environment the runner sets (NODE_OPTIONS,
PYTHONPERFSUPPORT, PYTHON_PERF_JIT_SUPPORT, JAVA_TOOL_OPTIONS; see
agent/language_env.hpp), so both see the same perf maps and jitdumps.
Over the samples of the busiest thread (the program's own): the share
whose leaf is unknown, that carry one of the program's functions, and that
reach its main function (the same rules as tests/e2e/languages_test.cpp).

  languages_bench.py --runner build/agent/runner \\
      --harness build/integrations/exec-harness/exec-harness [--seconds 3]
"""

import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "..", "tests", "e2e", "programs",
                        "languages")
LANGUAGE_ENV = {
    "NODE_OPTIONS": "--perf-basic-prof --interpreted-frames-native-stack",
    "JAVA_TOOL_OPTIONS": "-XX:+PreserveFramePointer "
                         "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
    "PYTHONPERFSUPPORT": "1",
    "PYTHON_PERF_JIT_SUPPORT": "1",
}
UNKNOWN = re.compile(r"^[^ ]+\+0x[0-9a-f]+$")


def runs(program):
    """A pyenv shim of a version that is not selected is in PATH but fails."""
    return subprocess.run([program, "--version"], capture_output=True,
                          check=False).returncode == 0


def find(name):
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(name)] + sorted(
        glob.glob(os.path.join(root, "versions", "*", "bin", name)))
    return next((c for c in candidates if c and runs(c)), None)


def languages(classes):
    own = "(parseDocument|scoreTags|fibonacci|scoreDocument|makeDocument|main)"
    py_own = ("py::(parse_document|score_tags|fibonacci|score_document|"
              "make_document|main):")
    out = []
    node = find("node")
    if node:
        out.append(("node", [node, os.path.join(PROGRAMS, "app.js")],
                    r"JS:[~*^+]?" + own + " ", r"JS:[~*^+]?main .*app\.js"))
    for version in ("3.12", "3.13"):
        py = find("python" + version)
        if py:
            out.append(("python" + version,
                        [py, os.path.join(PROGRAMS, "app.py")], py_own,
                        r"py::main:.*app\.py"))
    java, javac = find("java"), find("javac")
    if java and javac:
        subprocess.run([javac, "-d", classes,
                        os.path.join(PROGRAMS, "App.java")], check=True)
        out.append(("java", [java, "-cp", classes, "App"],
                    r"App[.:]+" + own + r"\b", r"^JavaMain$"))
    return out


def parse(text):
    """perf script / runner report --format perf-script: [(tid, [sym])]."""
    samples = []
    header = re.compile(r"\s(\d+)/(\d+)\s+\d+\.\d+:")
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            m = header.search(line)
            samples.append((int(m.group(2)) if m else 0, []))
            continue
        if not samples:
            continue
        parts = line.strip().split(" ", 1)
        rest = parts[1] if len(parts) > 1 else ""
        if rest.endswith(")") and " (" in rest:
            rest = rest[:rest.rindex(" (")]
        samples[-1][1].append(rest)
    return samples


def measure(samples, own, main):
    per_tid = collections.Counter(tid for tid, frames in samples if frames)
    if not per_tid:
        return None
    busiest = per_tid.most_common(1)[0][0]
    rows = [frames for tid, frames in samples if tid == busiest and frames]
    own_re, main_re = re.compile(own), re.compile(main)

    def unknown(sym):
        return not sym or sym == "[unknown]" or UNKNOWN.match(sym)
    n = len(rows)
    return {
        "samples": n,
        "unknown_leaf": 100.0 * sum(bool(unknown(f[0])) for f in rows) / n,
        "own": 100.0 * sum(any(own_re.search(s) for s in f) for f in rows) / n,
        "main": 100.0 * sum(any(main_re.search(s) for s in f) for f in rows) / n,
    }


def run_runner(args, command, mode, work):
    folder = os.path.join(work, "profile")
    env = dict(os.environ, RUNNER_EXEC_HARNESS=args.harness)
    subprocess.run([args.runner, "exec", "--profile-folder", folder,
                    "--warmup-time", "0", "--max-rounds", "1",
                    "--call-graph", mode, "--"] + command + [str(args.seconds)],
                   env=env, cwd=work, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    out = subprocess.run([args.runner, "report", "--format", "perf-script",
                          folder], check=True, capture_output=True, text=True)
    return out.stdout


def run_perf(command, mode, work, seconds):
    data = os.path.join(work, "perf.data")
    graph = ["--call-graph", "dwarf,8192"] if mode == "dwarf" else ["-g"]
    env = dict(os.environ, **LANGUAGE_ENV)
    subprocess.run(["perf", "record", "-q", "-F", "997", "-k", "1"] + graph +
                   ["-o", data, "--"] + command + [str(seconds)], env=env,
                   cwd=work, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    dumps = glob.glob(os.path.join(work, "jit-*.dump")) + [
        p for p in glob.glob("/tmp/jit-*.dump")
        if os.path.getmtime(p) >= os.path.getmtime(data) - seconds - 5]
    if dumps:
        injected = data + ".jit"
        subprocess.run(["perf", "inject", "--jit", "-i", data, "-o", injected],
                       check=True, cwd=work, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        data = injected
    out = subprocess.run(["perf", "script", "-F", "comm,pid,tid,time,ip,sym,dso",
                          "-i", data], capture_output=True, text=True,
                         cwd=work)
    return out.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runner", required=True)
    parser.add_argument("--harness", required=True)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    args.runner = os.path.abspath(args.runner)
    args.harness = os.path.abspath(args.harness)
    rows = []
    with tempfile.TemporaryDirectory() as classes:
        for name, command, own, main_re in languages(classes):
            for tool in ("runner", "perf"):
                for mode in ("dwarf", "fp"):
                    with tempfile.TemporaryDirectory() as work:
                        text = (run_runner(args, command, mode, work)
                                if tool == "runner" else
                                run_perf(command, mode, work, args.seconds))
                    m = measure(parse(text), own, main_re)
                    rows.append((name, tool, mode, m))
                    print("%-11s %-6s %-5s %s" % (name, tool, mode, m),
                          file=sys.stderr)
    print("| program | mode | tool | samples | unknown leaf | own functions "
          "| reach main |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name, tool, mode, m in rows:
        if m is None:
            print("| %s | %s | %s | 0 | | | |" % (name, mode, tool))
            continue
        print("| %s | %s | %s | %d | %.1f%% | %.1f%% | %.1f%% |" % (
            name, mode, tool, m["samples"], m["unknown_leaf"], m["own"],
            m["main"]))


if __name__ == "__main__":
    main()
