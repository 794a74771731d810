#!/usr/bin/python3
"""How large a profile is, with and without zstd compression: runner against
perf, on the same workload, in one run.

The workload (default: bench/overhead's `workload threads 2 3000000`) is
recorded four ways, at 997 Hz with DWARF stacks of 8192 bytes:

  runner        `runner exec --max-rounds 1 --warmup-time 0 -- WORKLOAD`
  runner -z     the same with --compress (zstd level 1)
  perf          `perf record -e EVENT -k CLOCK_MONOTONIC
                 --call-graph dwarf,8192 -F 997 -o - -- WORKLOAD`
  perf -z       the same with -z (zstd level 1)

EVENT is the one the runner chose (its summary line names it). Printed:
perf.pipedata's size, the whole profile folder's (runner), the samples
(`perf script`, which reads all four), bytes per sample, and the ratios
compressed/uncompressed folder and runner -z / perf -z pipedata.

  size_bench.py --runner build/agent/runner \\
      --harness build/integrations/exec-harness/exec-harness \\
      [--workload build/bench/overhead/workload threads 2 3000000]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

MIB = 1024.0 * 1024.0


def folder_size(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                total += os.path.getsize(full)
    return total


def count_samples(pipedata):
    out = subprocess.run(["perf", "script", "-f", "-i", pipedata, "-F", "tid",
                          "-G"],
                         capture_output=True, text=True, check=True).stdout
    return sum(1 for line in out.splitlines() if line.strip())


def run_runner(args, work, folder, compress):
    argv = [args.runner, "exec", "--profile-folder", folder,
            "--max-rounds", "1", "--warmup-time", "0"]
    if compress:
        argv.append("--compress")
    env = dict(os.environ, RUNNER_EXEC_HARNESS=args.harness)
    done = subprocess.run(argv + ["--"] + work, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        sys.exit("runner failed:\n" + done.stderr)
    event = re.search(r"sampled with (\S+) at", done.stderr)
    line = re.search(r"perf\.pipedata: .*\)", done.stderr)
    return (event.group(1) if event else "cpu-clock",
            line.group(0) if line else "")


def run_perf(work, out_path, event, compress):
    argv = ["perf", "record", "-q", "-e", event, "-k", "CLOCK_MONOTONIC",
            "--call-graph", "dwarf,8192", "-F", "997", "-o", "-"]
    if compress:
        argv.append("-z")
    with open(out_path, "wb") as out:
        done = subprocess.run(argv + ["--"] + work, stdout=out,
                              stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        sys.exit("perf record failed:\n" + done.stderr.decode())


def row(name, pipedata, folder):
    size = os.path.getsize(pipedata)
    samples = count_samples(pipedata)
    whole = folder_size(folder) if folder else None
    per = size / samples if samples else 0.0
    print("%-10s %12d %9.2f %13s %8d %10.0f" % (
        name, size, size / MIB,
        "%.2f MiB" % (whole / MIB) if whole is not None else "-",
        samples, per))
    return size, whole, samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runner", default="build/agent/runner")
    parser.add_argument("--harness",
                        default="build/integrations/exec-harness/exec-harness")
    parser.add_argument("--workload", nargs="+",
                        default=["build/bench/overhead/workload", "threads",
                                 "2", "3000000"])
    args = parser.parse_args()
    work = [os.path.abspath(args.workload[0])] + args.workload[1:]
    with tempfile.TemporaryDirectory(prefix="size_bench.") as tmp:
        plain_dir = os.path.join(tmp, "runner")
        packed_dir = os.path.join(tmp, "runner-z")
        event, _ = run_runner(args, work, plain_dir, False)
        _, summary = run_runner(args, work, packed_dir, True)
        run_perf(work, os.path.join(tmp, "perf.pipe"), event, False)
        run_perf(work, os.path.join(tmp, "perf-z.pipe"), event, True)
        print("workload: %s (event %s, 997 Hz, dwarf,8192)" %
              (" ".join(args.workload), event))
        if summary:
            print("runner -z: " + summary)
        print("%-10s %12s %9s %13s %8s %10s" % (
            "", "pipedata B", "MiB", "folder", "samples", "B/sample"))
        plain = row("runner", os.path.join(plain_dir, "perf.pipedata"),
                    plain_dir)
        packed = row("runner -z", os.path.join(packed_dir, "perf.pipedata"),
                     packed_dir)
        perf = row("perf", os.path.join(tmp, "perf.pipe"), None)
        perf_z = row("perf -z", os.path.join(tmp, "perf-z.pipe"), None)
        print("runner -z / runner, folder:   %.3f" % (packed[1] / plain[1]))
        print("runner -z / runner, pipedata: %.3f" % (packed[0] / plain[0]))
        print("perf -z / perf, pipedata:     %.3f" % (perf_z[0] / perf[0]))
        print("runner -z / perf -z pipedata: %.3f (per sample: %.3f)" % (
            packed[0] / perf_z[0],
            (packed[0] / max(packed[2], 1)) / (perf_z[0] / max(perf_z[2], 1))))


if __name__ == "__main__":
    main()
