#!/usr/bin/python3
"""Finalize time of `runner run` with a cold and a warm finalize cache, and
perf's own post-processing of an equivalent recording.

For each round (interleaved, so machine drift hits every kind alike):

  first    `runner run -- WORKLOAD` with XDG_CACHE_HOME set to an empty
           folder: every ELF file is parsed (symbols, .eh_frame, DWARF).
  second   the same again on that now-filled cache: every file with a
           build-id comes from the cache.
  perf     `perf record --call-graph dwarf -F 997 -o perf.data -- WORKLOAD`
           (not timed), then the timed post-processing: `perf script`
           (symbolized call chains of every sample: what perf does to turn a
           recording into named stacks, the equivalent of the runner's
           finalize + report inputs), and `perf report --stdio` as a second
           view.

The runner's times come from its summary line
  runner: finalize: N files, M from cache, T ms (symbols S ms)
(T: all of finalize: mapping replay, artifacts, perf maps, metadata), next
to the size of the profile's perf.pipedata: the mapping replay reads the
side-band records the sampler kept, so T should not follow that size.
Prints medians and the ratios second-run ms and first-run / perf script.

  finalize_bench.py --runner build/agent/runner [--rounds 5] \\
      [--exec] [--runner-arg=-F --runner-arg=10000 ...] [--no-perf] \\
      [-- WORKLOAD ARGS...]   (default: build/integrations/examples/bench_example --rounds 2)

--exec profiles the workload with `runner exec` (one measured round, no
warmup: a program without a CodSpeed integration), e.g. a profile of
gigabytes:
  finalize_bench.py --exec --no-perf --rounds 3 \\
      --runner-arg=-F --runner-arg=10000 \\
      --runner-arg=--call-graph --runner-arg=dwarf,32768 \\
      -- build/bench/overhead/workload threads 2 1500000
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SUMMARY = re.compile(
    r"runner: finalize: (\d+) files, (\d+) from cache, ([\d.]+) ms "
    r"\(symbols ([\d.]+) ms\)")


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runner", default="build/agent/runner")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--perf", default="perf")
    p.add_argument("--exec", action="store_true",
                   help="runner exec (one round, no warmup), not runner run")
    p.add_argument("--runner-arg", action="append", default=[],
                   help="an argument for runner run/exec (repeat)")
    p.add_argument("--no-perf", action="store_true",
                   help="skip the perf record/script rounds")
    p.add_argument("workload", nargs="*",
                   default=["build/integrations/examples/bench_example",
                            "--rounds", "2"])
    return p.parse_args()


def runner_run(args, work, name, cache):
    folder = os.path.join(work, name)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    if args.exec:
        mode = ["exec", "--warmup-time", "0", "--max-rounds", "1"]
    else:
        mode = ["run", "--fifo-dir", work]
    r = subprocess.run([args.runner] + mode + args.runner_arg +
                       ["--profile-folder", folder, "--"] + args.workload,
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"runner failed ({r.returncode}):\n{r.stderr}")
    m = SUMMARY.search(r.stderr)
    if not m:
        sys.exit(f"no finalize summary line in:\n{r.stderr}")
    pipedata = os.path.join(folder, "perf.pipedata")
    size = os.path.getsize(pipedata) if os.path.exists(pipedata) else 0
    shutil.rmtree(folder)
    return {"files": int(m[1]), "cached": int(m[2]),
            "total_ms": float(m[3]), "symbols_ms": float(m[4]),
            "profile_mb": size / 1e6}


def timed(argv, cwd):
    start = time.monotonic()
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    ms = (time.monotonic() - start) * 1e3
    if r.returncode != 0:
        sys.exit(f"{argv[0]} failed:\n{r.stderr}")
    return ms


def perf_round(perf, workload, work):
    data = os.path.join(work, "perf.data")
    subprocess.run([perf, "record", "-q", "--call-graph", "dwarf", "-F", "997",
                    "-o", data, "--"] + workload, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    script = timed([perf, "script", "-i", data], work)
    report = timed([perf, "report", "--stdio", "-i", data], work)
    os.unlink(data)
    return script, report


def main():
    args = parse_args()
    first, second, script, report = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="finalize-bench.") as work:
        for i in range(args.rounds):
            cache = os.path.join(work, f"xdg{i}")
            first.append(runner_run(args, work, "first", cache))
            second.append(runner_run(args, work, "second", cache))
            if not args.no_perf:
                s, r = perf_round(args.perf, args.workload, work)
                script.append(s)
                report.append(r)
            shutil.rmtree(cache)
    med = statistics.median

    def show(name, runs):
        print(f"{name:<22} total {med(r['total_ms'] for r in runs):7.1f} ms"
              f"  symbols {med(r['symbols_ms'] for r in runs):7.1f} ms"
              f"  profile {med(r['profile_mb'] for r in runs):8.1f} MB"
              f"  ({runs[0]['files']} files, {runs[0]['cached']} from cache)")

    print(f"workload: {' '.join(args.workload)}; {args.rounds} rounds, medians")
    show("runner first run", first)
    show("runner second run", second)
    second_ms = med(r["total_ms"] for r in second)
    first_ms = med(r["total_ms"] for r in first)
    print(f"second run: {second_ms:.1f} ms (goal <= 50 ms)")
    if args.no_perf:
        return
    print(f"{'perf script':<22} {med(script):7.1f} ms")
    print(f"{'perf report --stdio':<22} {med(report):7.1f} ms")
    print(f"first run / perf script: {first_ms / med(script):.2f}")
    print(f"second run / perf script: {second_ms / med(script):.3f}")


if __name__ == "__main__":
    main()
