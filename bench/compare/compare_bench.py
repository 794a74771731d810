#!/usr/bin/python3
"""Calibration of `runner compare`: false alarms and detections per condition and mode.

For each condition (the machine as it is, or with a neighbour process the
script starts), each mode (how the two sides are measured and compared) and
each kind of pair (A/A: the same program twice; A/B PCT%: the program made
PCT% slower with compare_workload's `--slower PCT`), it runs `--pairs`
comparisons of tests/e2e/programs/compare_workload.c and counts the verdicts
of `runner compare`. A false alarm is an A/A pair called `regression` or
`improvement`; a detection is an A/B pair called `regression`; every other
verdict word (`unchanged`, `inconclusive`, or any other) is counted as it is.

Conditions (--conditions, default all):
  quiet    nothing added (the load average before and after is recorded)
  cpu      one CPU-bound neighbour: a busy loop, for the whole condition
  memory   one memory-bandwidth neighbour: bench/compare/memory_neighbour.c,
           compiled with `cc -O2` into OUT, streaming over --memory-mib MiB

Modes (--modes, default all):
  exec-rounds   one `runner exec --warmup-time 100ms --max-rounds 20` per side
  exec-default  one `runner exec` per side with its defaults
  pooled        --pooled-runs runs per side (exec-default settings), compared
                as `runner compare A1 B1 --base A2 --head B2 ...`
  paired        `runner compare --paired --pairs 20 'A' 'B'`
  interleaved   one `runner exec --interleave --warmup-time 200ms
                --max-rounds 20 -- A ::: B` (A and B alternating round by
                round in one run), then `runner compare --interleaved`

Within a condition the pairs are interleaved (pair 1 of every mode and kind,
then pair 2, ...) and the sides of a pair alternate their order, so that
drift of the machine hits every mode and kind alike. The time of a
comparison is all its runs plus `runner compare`. Prints one line per
comparison, then one Markdown table per condition with the issue's targets
beside each row, and writes everything to OUT/compare_bench.json.

  compare_bench.py --runner build/agent/runner \\
      --harness build/integrations/exec-harness/exec-harness \\
      --workload build/tests/e2e/compare_workload [--pairs 20] [--out DIR]
"""

import argparse
import collections
import contextlib
import ctypes
import fcntl
import glob
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

CONDITIONS = ("quiet", "cpu", "memory")
MODES = ("exec-rounds", "exec-default", "pooled", "paired", "interleaved")
KNOWN_VERDICTS = ("regression", "improvement", "unchanged", "inconclusive")
HERE = os.path.dirname(os.path.abspath(__file__))

# The targets a comparison should meet on a 2-core machine.
MAX_FALSE_ALARMS = 0.05           # A/A, every condition
MIN_DETECTED = {10: 0.95, 5: 0.80}  # A/B PCT%, conditions below only
DETECTION_CONDITIONS = ("quiet", "cpu")
MAX_SECONDS = 120.0               # per comparison
MAX_CONSECUTIVE_ERRORS = 3


class Failure(Exception):
    """A run or a comparison that failed: recorded, and the bench goes on."""


def csv(choices):
    def parse(text):
        items = [s.strip() for s in text.split(",") if s.strip()]
        unknown = [s for s in items if s not in choices]
        if unknown or not items:
            raise argparse.ArgumentTypeError(
                f"choose among {','.join(choices)} (got {text!r})")
        return items
    return parse


def slowdown_list(text):
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"integers in percent: {text!r}")
    if any(v <= 0 or v > 1000 for v in values):
        raise argparse.ArgumentTypeError(f"1..1000 percent: {text!r}")
    return values


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runner", required=True)
    p.add_argument("--harness", required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--pairs", type=int, default=20,
                   help="comparisons of each condition x mode x kind "
                        "(default 20)")
    p.add_argument("--slowdowns", type=slowdown_list, default=[3, 5, 10],
                   help="A/B slowdowns in percent (default 3,5,10)")
    p.add_argument("--conditions", type=csv(CONDITIONS),
                   default=list(CONDITIONS),
                   help="default quiet,cpu,memory")
    p.add_argument("--modes", type=csv(MODES), default=list(MODES),
                   help="default exec-rounds,exec-default,pooled,paired,"
                        "interleaved")
    p.add_argument("--rounds", type=int, default=20,
                   help="exec-rounds: --max-rounds (default 20)")
    p.add_argument("--warmup", default="100ms",
                   help="exec-rounds: --warmup-time (default 100ms)")
    p.add_argument("--pooled-runs", type=int, default=3,
                   help="pooled: runs per side (default 3)")
    p.add_argument("--paired-pairs", type=int, default=20,
                   help="paired: runner compare --pairs (default 20)")
    p.add_argument("--interleaved-rounds", type=int, default=20,
                   help="interleaved: --max-rounds, rounds of each command "
                        "(default 20)")
    p.add_argument("--memory-mib", type=int, default=256,
                   help="memory: the neighbour's buffer in MiB (default 256)")
    p.add_argument("--out", default="bench-compare",
                   help="work folder; everything goes to "
                        "OUT/compare_bench.json")
    p.add_argument("--lock", default="",
                   help="a file to flock around each comparison (shared "
                        "machines)")
    args = p.parse_args()
    for name in ("pairs", "rounds", "pooled_runs", "paired_pairs",
                 "interleaved_rounds", "memory_mib"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


@contextlib.contextmanager
def maybe_locked(path):
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# ---------------------------------------------------------------- neighbours

def die_with_parent():
    """In the neighbour, before exec: SIGKILL when this script dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def neighbour_command(args, condition):
    if condition == "cpu":
        return [sys.executable, "-c", "while True: pass"]
    if condition == "memory":
        return [args.memory_neighbour, str(args.memory_mib)]
    return None


def build_memory_neighbour(out):
    cc = shutil.which("cc")
    if cc is None:
        sys.exit("compare_bench: the memory condition needs a C compiler "
                 "(cc: Debian's gcc)")
    binary = os.path.join(os.path.abspath(out), "memory_neighbour")
    source = os.path.join(HERE, "memory_neighbour.c")
    run = subprocess.run([cc, "-O2", "-o", binary, source],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"compare_bench: cc {source} failed: {run.stderr}")
    return binary


@contextlib.contextmanager
def neighbour(args, condition):
    """The condition's neighbour process, running for the whole block and
    killed (its whole process group) on every way out of it."""
    command = neighbour_command(args, condition)
    if command is None:
        yield None
        return
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                               start_new_session=True,
                               preexec_fn=die_with_parent)
    try:
        time.sleep(1.0)  # let it reach its steady state
        if process.poll() is not None:
            sys.exit(f"compare_bench: the {condition} neighbour exited at "
                     f"once ({process.returncode})")
        yield command
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def raise_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


# --------------------------------------------------------------- one sample

def record(args, folder, slower, options):
    """One `runner exec` of the workload into `folder`; its median round."""
    shutil.rmtree(folder, ignore_errors=True)
    command = [args.workload] + (["--slower", str(slower)] if slower else [])
    argv = ([args.runner, "exec", "--profile-folder", folder,
             "--name", "workload"] + options + ["--"] + command)
    env = dict(os.environ, RUNNER_EXEC_HARNESS=args.harness)
    run = subprocess.run(argv, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise Failure(f"runner exec failed ({run.returncode}): "
                      f"{run.stderr[-2000:]}")
    results = glob.glob(os.path.join(folder, "results", "*.json"))
    if len(results) != 1:
        raise Failure(f"{folder}: {len(results)} results files")
    try:
        with open(results[0]) as f:
            [bench] = json.load(f)["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Failure(f"{results[0]}: {e!r}")
    times = [t / n for t, n in zip(bench.get("times_per_round_ns", []),
                                   bench.get("iters_per_round", []))]
    return {"rounds": len(times),
            "median_ns": statistics.median(times) if times else None}


def parse_compare(run):
    """`runner compare --format json`: its one benchmark, whatever the exit
    status (0 or 1 today; other verdict exits may come)."""
    try:
        document = json.loads(run.stdout)
        [bench] = document["benchmarks"]
    except (ValueError, KeyError, TypeError):
        raise Failure(f"runner compare failed ({run.returncode}): "
                      f"{run.stderr[-2000:]}")
    bench = {k: v for k, v in bench.items()
             if k not in ("top_functions", "diff_flamegraph")}
    return {"verdict": bench.get("verdict"), "exit_code": run.returncode,
            "benchmark": bench, "noise": document.get("noise", [])}


def compare_folders(args, bases, heads, out):
    argv = [args.runner, "compare", bases[0], heads[0], "--out", out,
            "--format", "json"]
    for folder in bases[1:]:
        argv += ["--base", folder]
    for folder in heads[1:]:
        argv += ["--head", folder]
    return parse_compare(subprocess.run(argv, capture_output=True,
                                        text=True))


def exec_options(args, mode):
    if mode == "exec-rounds":
        return ["--warmup-time", args.warmup, "--max-rounds", str(args.rounds)]
    return []  # exec-default, pooled: runner exec's defaults


def run_folders(args, mode, slower, index):
    """exec-rounds, exec-default, pooled: fresh runs of both sides, the
    order alternating run by run and, from one pair to the next, which side
    starts; then `runner compare` on the folders."""
    work = os.path.join(args.out, "work")
    runs = args.pooled_runs if mode == "pooled" else 1
    sides = {"base": 0, "head": slower}
    order = ["base", "head"] if index % 2 == 0 else ["head", "base"]
    folders = {"base": [], "head": []}
    recorded = []
    for run in range(runs):
        for side in (order if run % 2 == 0 else order[::-1]):
            folder = os.path.join(work, f"{side}{run + 1}")
            result = record(args, folder, sides[side], exec_options(args, mode))
            folders[side].append(folder)
            recorded.append(dict(result, side=side, run=run + 1))
    compared = compare_folders(args, folders["base"], folders["head"],
                               os.path.join(work, "compare"))
    compared["runs"] = recorded
    return compared


def run_paired(args, slower):
    base = shlex.quote(args.workload)
    head = base + (f" --slower {slower}" if slower else "")
    argv = [args.runner, "compare", "--paired", "--pairs",
            str(args.paired_pairs), "--format", "json", base, head]
    return parse_compare(subprocess.run(argv, capture_output=True, text=True))


def run_interleaved(args, slower):
    """One `runner exec --interleave` of A (the base) and B, then
    `runner compare --interleaved` on its folder."""
    folder = os.path.join(args.out, "work", "interleaved")
    shutil.rmtree(folder, ignore_errors=True)
    head = [args.workload] + (["--slower", str(slower)] if slower else [])
    argv = ([args.runner, "exec", "--interleave", "--profile-folder", folder,
             "--name", "workload", "--warmup-time", "200ms", "--max-rounds",
             str(args.interleaved_rounds), "--", args.workload, ":::"] + head)
    env = dict(os.environ, RUNNER_EXEC_HARNESS=args.harness)
    run = subprocess.run(argv, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise Failure(f"runner exec --interleave failed ({run.returncode}): "
                      f"{run.stderr[-2000:]}")
    argv = [args.runner, "compare", "--interleaved", folder, "--out",
            os.path.join(folder, "compare"), "--format", "json"]
    return parse_compare(subprocess.run(argv, capture_output=True, text=True))


def run_comparison(args, condition, mode, kind, slower, index):
    with maybe_locked(args.lock):
        load = os.getloadavg()[0]
        started = time.monotonic()
        try:
            if mode == "paired":
                result = run_paired(args, slower)
            elif mode == "interleaved":
                result = run_interleaved(args, slower)
            else:
                result = run_folders(args, mode, slower, index)
        except Failure as failure:
            result = {"verdict": "error", "error": str(failure)}
        seconds = time.monotonic() - started
    return dict(result, condition=condition, mode=mode, kind=kind,
                slower_pct=slower, index=index, base_first=index % 2 == 0,
                seconds=round(seconds, 2), loadavg_1min=load)


# ------------------------------------------------------------------ summary

def flagged(kind, verdict):
    if kind == "A/A":
        return verdict in ("regression", "improvement")
    return verdict == "regression"


def summarise(comparisons):
    """Counts, median change and interval width, median seconds."""
    verdicts = collections.Counter(c["verdict"] for c in comparisons)
    benches = [c["benchmark"] for c in comparisons if "benchmark" in c]
    changes = [b["change"] for b in benches if b.get("change") is not None]
    widths = [b["ci_high"] - b["ci_low"] for b in benches
              if b.get("ci_low") is not None and b.get("ci_high") is not None]
    return {"pairs": len(comparisons),
            "flagged": sum(flagged(c["kind"], c["verdict"])
                           for c in comparisons),
            "verdicts": dict(verdicts),
            "median_change": statistics.median(changes) if changes else None,
            "median_ci_width": statistics.median(widths) if widths else None,
            "median_seconds": statistics.median(
                c["seconds"] for c in comparisons) if comparisons else None}


def targets(condition, kind, slower, row):
    """The targets this row has: [(description, met)]."""
    out = []
    n = row["pairs"]
    if n == 0:
        return out
    rate = row["flagged"] / n
    if kind == "A/A":
        out.append((f"false alarms ≤ {MAX_FALSE_ALARMS:.0%}",
                    rate <= MAX_FALSE_ALARMS))
    elif slower in MIN_DETECTED and condition in DETECTION_CONDITIONS:
        out.append((f"detected ≥ {MIN_DETECTED[slower]:.0%}",
                    rate >= MIN_DETECTED[slower]))
    out.append((f"≤ {MAX_SECONDS / 60:.0f} min",
                row["median_seconds"] <= MAX_SECONDS))
    return out


def percent(value):
    return "–" if value is None else f"{value:+.1%}"


def table(condition, kinds, modes, summary):
    lines = ["| mode | kind | flagged | regression | improvement | unchanged "
             "| inconclusive | other | median change | median CI width "
             "| median s per comparison | targets |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for mode in modes:
        for kind, slower in kinds:
            row = summary[mode][kind]
            v = row["verdicts"]
            other = ", ".join(f"{k} {n}" for k, n in sorted(v.items())
                              if k not in KNOWN_VERDICTS) or "0"
            what = "false alarms" if kind == "A/A" else "detected"
            met = "; ".join(f"{text}: {'pass' if ok else 'FAIL'}"
                            for text, ok in targets(condition, kind, slower,
                                                    row))
            width = row["median_ci_width"]
            counts = " | ".join(str(v.get(k, 0)) for k in KNOWN_VERDICTS)
            seconds = row["median_seconds"]
            lines.append(
                f"| {mode} | {kind} | {what} {row['flagged']}/{row['pairs']} "
                f"| {counts} | {other} | {percent(row['median_change'])} "
                f"| {'–' if width is None else f'{width:.1%}'} "
                f"| {'–' if seconds is None else f'{seconds:.1f}'} "
                f"| {met} |")
    return "\n".join(lines)


# --------------------------------------------------------------------- main

def progress_line(started, c):
    b = c.get("benchmark", {})
    interval = ""
    if b.get("ci_low") is not None and b.get("ci_high") is not None:
        interval = f" [{b['ci_low']:+.1%}, {b['ci_high']:+.1%}]"
    text = (f"[{time.monotonic() - started:6.0f} s] {c['condition']:6} "
            f"{c['mode']:12} {c['kind']:9} #{c['index'] + 1:2}: "
            f"{c['verdict']} {percent(b.get('change'))}{interval} "
            f"in {c['seconds']:.1f} s (load {c['loadavg_1min']:.1f})")
    if "error" in c:
        text += "\n    " + c["error"].strip().replace("\n", "\n    ")
    return text


def run_condition(args, record_, kinds, started):
    """Every comparison of one condition into record_["comparisons"], its
    neighbour running throughout."""
    record_["loadavg_before"] = list(os.getloadavg())
    if record_["condition"] == "quiet" and \
            record_["loadavg_before"][0] > 0.5 * (os.cpu_count() or 1):
        print(f"compare_bench: warning: load average "
              f"{record_['loadavg_before'][0]:.1f} on {os.cpu_count()} CPUs: "
              "the quiet condition is not quiet", file=sys.stderr, flush=True)
    errors = 0
    with neighbour(args, record_["condition"]) as command:
        record_["neighbour"] = command
        for index in range(args.pairs):
            for mode in args.modes:
                for kind, slower in kinds:
                    c = run_comparison(args, record_["condition"], mode, kind,
                                       slower, index)
                    record_["comparisons"].append(c)
                    print(progress_line(started, c), flush=True)
                    errors = errors + 1 if c["verdict"] == "error" else 0
                    if errors >= MAX_CONSECUTIVE_ERRORS:
                        raise SystemExit(f"compare_bench: {errors} failures "
                                         "in a row, stopping")
    record_["loadavg_after"] = list(os.getloadavg())


def add_summary(record_, modes, kinds):
    comparisons = record_["comparisons"]
    record_["summary"] = {
        mode: {kind: summarise([c for c in comparisons
                                if c["mode"] == mode and c["kind"] == kind])
               for kind, _ in kinds} for mode in modes}


def settings(args, kinds):
    return {"pairs": args.pairs, "conditions": args.conditions,
            "modes": args.modes, "kinds": [k for k, _ in kinds],
            "exec_rounds": {"warmup_time": args.warmup,
                            "max_rounds": args.rounds},
            "pooled_runs": args.pooled_runs,
            "paired_pairs": args.paired_pairs,
            "memory_mib": args.memory_mib,
            "targets": {"max_false_alarms": MAX_FALSE_ALARMS,
                        "min_detected": {f"A/B {k}%": v
                                         for k, v in MIN_DETECTED.items()},
                        "detection_conditions": list(DETECTION_CONDITIONS),
                        "max_seconds": MAX_SECONDS},
            "runner": args.runner, "workload": args.workload,
            "cpus": os.cpu_count(), "machine": platform.platform()}


def write(path, document):
    with open(path + ".tmp", "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def report(args, kinds, document):
    for c in document["conditions"]:
        before = c["loadavg_before"][0]
        after = c.get("loadavg_after", [float("nan")])[0]
        print(f"\n### {c['condition']} (load average {before:.2f} before, "
              f"{after:.2f} after)\n")
        print(table(c["condition"], kinds, args.modes, c["summary"]))


def main():
    args = parse_args()
    kinds = [("A/A", 0)] + [(f"A/B {s}%", s) for s in args.slowdowns]
    os.makedirs(args.out, exist_ok=True)
    args.memory_neighbour = (build_memory_neighbour(args.out)
                             if "memory" in args.conditions else None)
    path = os.path.join(args.out, "compare_bench.json")
    for signum in (signal.SIGTERM, signal.SIGHUP):  # SIGINT: KeyboardInterrupt
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, raise_on_signal)
    started = time.monotonic()
    document = {"settings": settings(args, kinds), "complete": False,
                "conditions": []}
    try:
        for condition in args.conditions:
            record_ = {"condition": condition, "comparisons": []}
            document["conditions"].append(record_)
            run_condition(args, record_, kinds, started)
            add_summary(record_, args.modes, kinds)
            write(path, document)
        document["complete"] = True
    except BaseException:
        print(f"compare_bench: stopped; what was measured is in {path}",
              file=sys.stderr)
        raise
    finally:
        for record_ in document["conditions"]:
            add_summary(record_, args.modes, kinds)
        document["seconds"] = round(time.monotonic() - started, 1)
        write(path, document)
        shutil.rmtree(os.path.join(args.out, "work"), ignore_errors=True)
    report(args, kinds, document)
    count = sum(len(c["comparisons"]) for c in document["conditions"])
    print(f"\n{count} comparisons in {document['seconds']:.0f} s; "
          f"every one in {path}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
