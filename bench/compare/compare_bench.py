#!/usr/bin/python3
"""`runner compare`'s false alarms and detections per condition, mode and metric.

For each condition (the machine as it is, or with a neighbour process the
script starts), each mode (how the two sides are measured and compared) and
each kind of pair (A/A: the same program twice; A/B PCT%: the program made
PCT% slower with compare_workload's `--scale PCT`, every stage doing PCT%
more work), it runs `--pairs` comparisons of
tests/e2e/programs/compare_workload.c and counts the verdicts of `runner
compare`, once per metric on the same runs. A false alarm is an
A/A pair called `regression` or `improvement`; a detection is an A/B pair
called `regression`; every other verdict word (`unchanged`, `inconclusive`,
or any other) is counted as it is.

Conditions (--conditions, default all):
  quiet    nothing added (the load average before and after is recorded)
  cpu      one CPU-bound neighbour: a busy loop, for the whole condition
  memory   one memory-bandwidth neighbour: bench/compare/memory_neighbour.c,
           compiled with `cc -O2` into OUT, streaming over --memory-mib MiB

Modes (--modes, default all):
  exec-rounds   one `runner exec --warmup-time 100ms --max-rounds 20` per side
                (--warmup, --rounds)
  exec-default  one `runner exec` per side with its defaults
  pooled        --pooled-runs runs per side (exec-default settings), compared
                as `runner compare A1 B1 --base A2 --head B2 ...`
  paired        `runner compare --paired --pairs 20 'A' 'B'` (--paired-pairs);
                wall only: the runner runs the commands itself, unprofiled,
                so there are no CPU counters to compare
  interleaved   one `runner exec --interleave --warmup-time 200ms
                --max-rounds 40 -- A ::: B` (A and B alternating round by
                round in one run; --interleaved-rounds), then
                `runner compare --interleaved`

Metrics (--metrics, default wall): each comparison's runs are compared by
`runner compare` once per metric, each its own row:
  wall          the time per iteration (runner compare's default)
  cpu           `runner compare --metric cpu`: the benchmark's CPU time per
                iteration (task-clock, from the runs' runner.counters.json)
  instructions  `runner compare --metric instructions` (needs a hardware PMU)
A metric that runner compare refuses is recorded as an `error` row with its
message, and the bench goes on.

--threshold PCT is passed to every `runner compare` (default: runner
compare's own, 5%); it is recorded in OUT/compare_bench.json and printed
above each table.

Within a condition the pairs are interleaved (pair 1 of every mode and kind,
then pair 2, ...) and the sides of a pair alternate their order, so that
drift of the machine hits every mode and kind alike. The time of a
comparison row is the time of its runs (shared by its metrics) plus that
metric's `runner compare`; both parts are recorded and printed. Prints one
line per comparison row, then one Markdown table per condition with the
targets beside each row (per mode, metric and kind), and writes everything
to OUT/compare_bench.json.

  compare_bench.py --runner build/agent/runner \\
      --harness build/integrations/exec-harness/exec-harness \\
      --workload build/tests/e2e/compare_workload [--pairs 20] \\
      [--metrics wall,cpu] [--threshold 5] [--out DIR]
"""

import argparse
import collections
import contextlib
import ctypes
import decimal
import fcntl
import glob
import json
import math
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
METRICS = ("wall", "cpu", "instructions")
# The paired mode's runs happen inside `runner compare --paired`, unprofiled.
WALL_ONLY_MODES = {"paired": "runner compare --paired runs the commands "
                             "itself, unprofiled: no counters"}
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


def threshold_pct(text):
    """--threshold: a percentage as runner compare takes it, 0 < PCT < 100."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = float("nan")
    if not 0 < value < 100:  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"a percentage between 0 and 100 (exclusive): {text!r}")
    return value


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
    p.add_argument("--metrics", type=csv(METRICS), default=["wall"],
                   metavar="LIST",
                   help="runner compare --metric, each its own row on the "
                        "same runs: wall, cpu, instructions (default wall)")
    p.add_argument("--threshold", type=threshold_pct, default=None,
                   metavar="PCT",
                   help="runner compare --threshold PCT (default: runner "
                        "compare's own, 5)")
    p.add_argument("--rounds", type=int, default=20,
                   help="exec-rounds: --max-rounds (default 20)")
    p.add_argument("--warmup", default="100ms",
                   help="exec-rounds: --warmup-time (default 100ms)")
    p.add_argument("--pooled-runs", type=int, default=3,
                   help="pooled: runs per side (default 3)")
    p.add_argument("--paired-pairs", type=int, default=20,
                   help="paired: runner compare --pairs (default 20)")
    p.add_argument("--interleaved-rounds", type=int, default=40,
                   help="interleaved: --max-rounds, rounds of each command "
                        "(default 40)")
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
    command = [args.workload] + (["--scale", str(slower)] if slower else [])
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
        compared_by = document.get("settings", {})
        if not isinstance(compared_by, dict):
            raise TypeError("settings")
    except (ValueError, KeyError, TypeError):
        raise Failure(f"runner compare failed ({run.returncode}): "
                      f"{run.stderr[-2000:]}")
    bench = {k: v for k, v in bench.items()
             if k not in ("top_functions", "diff_flamegraph")}
    return {"verdict": bench.get("verdict"), "exit_code": run.returncode,
            "benchmark": bench, "noise": document.get("noise", []),
            "settings": compared_by}


def pct_text(value):
    """A percentage as runner compare's --threshold reads it (no exponent)."""
    text = format(decimal.Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def compare_options(args, metric):
    """--metric only when it is not wall (the runner's default, and the only
    metric a runner without --metric knows), --threshold when given."""
    options = [] if metric == "wall" else ["--metric", metric]
    if args.threshold is not None:
        options += ["--threshold", pct_text(args.threshold)]
    return options


def check_settings(args, metric, compared_by):
    """compare.json's settings say what runner compare did: refuse a row
    compared by another metric or threshold than asked for."""
    said = compared_by.get("metric", "wall")
    if said != metric:
        raise Failure(f"runner compare compared by {said!r}, not {metric!r} "
                      "(compare.json's settings)")
    threshold = compared_by.get("threshold")
    if args.threshold is not None and not (
            isinstance(threshold, (int, float)) and
            math.isclose(threshold, args.threshold / 100, rel_tol=1e-9)):
        raise Failure(f"runner compare used threshold {threshold!r}, not "
                      f"{args.threshold / 100!r} (compare.json's settings)")


def run_compare(args, argv, metric):
    """One `runner compare` of the recorded runs by one metric."""
    run = subprocess.run(argv + compare_options(args, metric),
                         capture_output=True, text=True)
    result = parse_compare(run)
    check_settings(args, metric, result["settings"])
    return result


def metrics_of(args, mode):
    """The metrics this mode is compared by: --metrics, or wall alone."""
    if mode in WALL_ONLY_MODES:
        return [m for m in args.metrics if m == "wall"]
    return list(args.metrics)


def exec_options(args, mode):
    if mode == "exec-rounds":
        return ["--warmup-time", args.warmup, "--max-rounds", str(args.rounds)]
    return []  # exec-default, pooled: runner exec's defaults


def run_folders(args, mode, slower, index):
    """exec-rounds, exec-default, pooled: fresh runs of both sides, the
    order alternating run by run and, from one pair to the next, which side
    starts. Returns the runs and the `runner compare` command of a metric."""
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
    bases, heads = folders["base"], folders["head"]

    def compare_argv(metric):
        argv = [args.runner, "compare", bases[0], heads[0], "--out",
                os.path.join(work, f"compare-{metric}"), "--format", "json"]
        for folder in bases[1:]:
            argv += ["--base", folder]
        for folder in heads[1:]:
            argv += ["--head", folder]
        return argv
    return recorded, compare_argv


def run_paired(args, mode, slower, index):
    """Nothing to run beforehand: `runner compare --paired` runs both
    commands itself."""
    base = shlex.quote(args.workload)
    head = base + (f" --scale {slower}" if slower else "")
    return None, lambda metric: [
        args.runner, "compare", "--paired", "--pairs", str(args.paired_pairs),
        "--format", "json", base, head]


def run_interleaved(args, mode, slower, index):
    """One `runner exec --interleave` of A (the base) and B; the
    `runner compare --interleaved` command of a metric on its folder."""
    folder = os.path.join(args.out, "work", "interleaved")
    shutil.rmtree(folder, ignore_errors=True)
    head = [args.workload] + (["--scale", str(slower)] if slower else [])
    argv = ([args.runner, "exec", "--interleave", "--profile-folder", folder,
             "--name", "workload", "--warmup-time", "200ms", "--max-rounds",
             str(args.interleaved_rounds), "--", args.workload, ":::"] + head)
    env = dict(os.environ, RUNNER_EXEC_HARNESS=args.harness)
    run = subprocess.run(argv, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise Failure(f"runner exec --interleave failed ({run.returncode}): "
                      f"{run.stderr[-2000:]}")
    return [], lambda metric: [
        args.runner, "compare", "--interleaved", folder, "--out",
        os.path.join(folder, f"compare-{metric}"), "--format", "json"]


MEASURE = {"exec-rounds": run_folders, "exec-default": run_folders,
           "pooled": run_folders, "paired": run_paired,
           "interleaved": run_interleaved}


def measure(args, measurement):
    """The runs of one comparison into `measurement`; the command that
    compares them by a metric, or None when the runs failed."""
    started = time.monotonic()
    try:
        runs, compare_argv = MEASURE[measurement["mode"]](
            args, measurement["mode"], measurement["slower_pct"],
            measurement["index"])
        measurement["runs"] = runs
    except Failure as failure:
        measurement["error"] = str(failure)
        compare_argv = None
    # paired: the runs happen inside runner compare, and are timed there.
    measurement["runs_seconds"] = (
        None if measurement["mode"] == "paired"
        else round(time.monotonic() - started, 2))
    return compare_argv


def compare_row(args, measurement, compare_argv, metric):
    """One comparison row: the measurement's runs compared by `metric`."""
    started = time.monotonic()
    if compare_argv is None:
        result = {"verdict": "error", "error": measurement["error"]}
    else:
        try:
            result = run_compare(args, compare_argv(metric), metric)
        except Failure as failure:
            result = {"verdict": "error", "error": str(failure)}
    compare_seconds = (round(time.monotonic() - started, 2)
                       if compare_argv is not None else 0.0)
    shared = {k: measurement[k] for k in (
        "condition", "mode", "kind", "slower_pct", "index", "base_first",
        "loadavg_1min", "runs_seconds")}
    return dict(result, metric=metric, compare_seconds=compare_seconds,
                seconds=round((measurement["runs_seconds"] or 0.0) +
                              compare_seconds, 2), **shared)


def run_comparison(args, record_, mode, kind, slower, index, on_row):
    """One comparison: its runs (one measurement in record_), then
    `runner compare` once per metric (one row each, passed to on_row).
    Returns the rows."""
    rows = []
    with maybe_locked(args.lock):
        measurement = {"condition": record_["condition"], "mode": mode,
                       "kind": kind, "slower_pct": slower, "index": index,
                       "base_first": index % 2 == 0,
                       "loadavg_1min": os.getloadavg()[0]}
        record_["measurements"].append(measurement)
        compare_argv = measure(args, measurement)
        for metric in metrics_of(args, mode):
            row = compare_row(args, measurement, compare_argv, metric)
            row["measurement"] = len(record_["measurements"]) - 1
            rows.append(row)
            on_row(row)
    return rows


# ------------------------------------------------------------------ summary

def flagged(kind, verdict):
    if kind == "A/A":
        return verdict in ("regression", "improvement")
    return verdict == "regression"


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(comparisons):
    """Counts, median change and interval width, median seconds (the whole
    row, and its runs and its runner compare apart)."""
    verdicts = collections.Counter(c["verdict"] for c in comparisons)
    benches = [c["benchmark"] for c in comparisons if "benchmark" in c]
    widths = [b["ci_high"] - b["ci_low"] for b in benches
              if b.get("ci_low") is not None and b.get("ci_high") is not None]
    return {"pairs": len(comparisons),
            "flagged": sum(flagged(c["kind"], c["verdict"])
                           for c in comparisons),
            "verdicts": dict(verdicts),
            "median_change": median_of(b.get("change") for b in benches),
            "median_ci_width": median_of(widths),
            "median_seconds": median_of(c["seconds"] for c in comparisons),
            "median_runs_seconds": median_of(c["runs_seconds"]
                                             for c in comparisons),
            "median_compare_seconds": median_of(c["compare_seconds"]
                                                for c in comparisons)}


def targets(condition, kind, slower, row):
    """The targets this row has: [(description, met)]. A comparison that
    failed (`error`) counts against the target: an A/A error as a false
    alarm, an A/B error as a miss."""
    out = []
    n = row["pairs"]
    errors = row["verdicts"].get("error", 0)
    if n == 0 or errors == n:
        return out
    if kind == "A/A":
        out.append((f"false alarms ≤ {MAX_FALSE_ALARMS:.0%}",
                    (row["flagged"] + errors) / n <= MAX_FALSE_ALARMS))
    elif slower in MIN_DETECTED and condition in DETECTION_CONDITIONS:
        out.append((f"detected ≥ {MIN_DETECTED[slower]:.0%}",
                    row["flagged"] / n >= MIN_DETECTED[slower]))
    out.append((f"≤ {MAX_SECONDS / 60:.0f} min",
                row["median_seconds"] <= MAX_SECONDS))
    return out


def percent(value):
    return "–" if value is None else f"{value:+.1%}"


def seconds_cell(row):
    """Median seconds of the row: the whole, then (runs + compare)."""
    total = row["median_seconds"]
    if total is None:
        return "–"
    runs, compare = row["median_runs_seconds"], row["median_compare_seconds"]
    if runs is None:
        return f"{total:.1f} (all in compare)"
    return f"{total:.1f} ({runs:.1f} + {compare:.1f})"


def table_row(condition, mode, metric, kind, slower, row):
    v = row["verdicts"]
    other = ", ".join(f"{k} {n}" for k, n in sorted(v.items())
                      if k not in KNOWN_VERDICTS) or "0"
    what = "false alarms" if kind == "A/A" else "detected"
    met = "; ".join(f"{text}: {'pass' if ok else 'FAIL'}"
                    for text, ok in targets(condition, kind, slower, row))
    if row["pairs"] and v.get("error", 0) == row["pairs"]:
        met = "no verdict: every comparison failed"
    width = row["median_ci_width"]
    counts = " | ".join(str(v.get(k, 0)) for k in KNOWN_VERDICTS)
    return (f"| {mode} | {metric} | {kind} | {what} {row['flagged']}/"
            f"{row['pairs']} | {counts} | {other} "
            f"| {percent(row['median_change'])} "
            f"| {'–' if width is None else f'{width:.1%}'} "
            f"| {seconds_cell(row)} | {met} |")


def table(condition, kinds, modes, metrics, summary):
    lines = ["| mode | metric | kind | flagged | regression | improvement "
             "| unchanged | inconclusive | other | median change "
             "| median CI width | median s per comparison (runs + compare) "
             "| targets |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for mode in modes:
        for metric in metrics:
            rows = summary[mode][metric]
            if "not_measured" in rows:
                lines.append(f"| {mode} | {metric} | – | not measured: "
                             f"{rows['not_measured']} |" + " |" * 9)
                continue
            for kind, slower in kinds:
                lines.append(table_row(condition, mode, metric, kind, slower,
                                       rows[kind]))
    return "\n".join(lines)


# --------------------------------------------------------------------- main

def progress_line(started, c):
    b = c.get("benchmark", {})
    interval = ""
    if b.get("ci_low") is not None and b.get("ci_high") is not None:
        interval = f" [{b['ci_low']:+.1%}, {b['ci_high']:+.1%}]"
    parts = (f"compare {c['compare_seconds']:.1f}"
             if c["runs_seconds"] is None else
             f"runs {c['runs_seconds']:.1f} + compare "
             f"{c['compare_seconds']:.1f}")
    text = (f"[{time.monotonic() - started:6.0f} s] {c['condition']:6} "
            f"{c['mode']:12} {c['metric']:12} {c['kind']:9} "
            f"#{c['index'] + 1:2}: {c['verdict']} {percent(b.get('change'))}"
            f"{interval} in {c['seconds']:.1f} s ({parts}; load "
            f"{c['loadavg_1min']:.1f})")
    if "error" in c:
        text += "\n    " + c["error"].strip().replace("\n", "\n    ")
    return text


def run_condition(args, record_, kinds, started):
    """Every comparison of one condition into record_ (its runs in
    "measurements", its rows in "comparisons"), its neighbour running
    throughout."""
    record_["loadavg_before"] = list(os.getloadavg())
    if record_["condition"] == "quiet" and \
            record_["loadavg_before"][0] > 0.5 * (os.cpu_count() or 1):
        print(f"compare_bench: warning: load average "
              f"{record_['loadavg_before'][0]:.1f} on {os.cpu_count()} CPUs: "
              "the quiet condition is not quiet", file=sys.stderr, flush=True)

    def on_row(row):
        record_["comparisons"].append(row)
        print(progress_line(started, row), flush=True)
    errors = 0  # comparisons in a row whose every metric failed
    with neighbour(args, record_["condition"]) as command:
        record_["neighbour"] = command
        for index in range(args.pairs):
            for mode in args.modes:
                if not metrics_of(args, mode):
                    continue
                for kind, slower in kinds:
                    rows = run_comparison(args, record_, mode, kind, slower,
                                          index, on_row)
                    failed = all(r["verdict"] == "error" for r in rows)
                    errors = errors + 1 if failed else 0
                    if errors >= MAX_CONSECUTIVE_ERRORS:
                        raise SystemExit(f"compare_bench: {errors} failures "
                                         "in a row, stopping")
    record_["loadavg_after"] = list(os.getloadavg())


def not_measured(mode, metric):
    """Why a mode is not compared by a metric, or None."""
    if metric != "wall" and mode in WALL_ONLY_MODES:
        return f"wall only ({WALL_ONLY_MODES[mode]})"
    return None


def add_summary(args, record_, kinds):
    comparisons = record_["comparisons"]
    summary = {}
    for mode in args.modes:
        summary[mode] = {}
        for metric in args.metrics:
            reason = not_measured(mode, metric)
            summary[mode][metric] = {"not_measured": reason} if reason else {
                kind: summarise([c for c in comparisons
                                 if c["mode"] == mode and
                                 c["metric"] == metric and c["kind"] == kind])
                for kind, _ in kinds}
    record_["summary"] = summary


def settings(args, kinds):
    return {"pairs": args.pairs, "conditions": args.conditions,
            "modes": args.modes, "metrics": args.metrics,
            "not_measured": [{"mode": mode, "metric": metric,
                              "reason": not_measured(mode, metric)}
                             for mode in args.modes for metric in args.metrics
                             if not_measured(mode, metric)],
            "threshold_pct": args.threshold,  # None: runner compare's default
            "kinds": [k for k, _ in kinds],
            "exec_rounds": {"warmup_time": args.warmup,
                            "max_rounds": args.rounds},
            "pooled_runs": args.pooled_runs,
            "paired_pairs": args.paired_pairs,
            "interleaved": {"warmup_time": "200ms",
                            "max_rounds": args.interleaved_rounds},
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


def threshold_line(args, comparisons):
    """The threshold, as asked for and as compare.json's settings say."""
    seen = sorted({c["settings"]["threshold"] for c in comparisons
                   if isinstance(c.get("settings", {}).get("threshold"),
                                 (int, float))})
    used = ", ".join(f"{t:.4g}%" for t in (100 * t for t in seen))
    asked = (f"--threshold {pct_text(args.threshold)}%"
             if args.threshold is not None else "runner compare's default")
    return (f"threshold: {asked}" + (f" ({used} in compare.json)" if used
                                     else "") +
            f"; metrics: {', '.join(args.metrics)}")


def report(args, kinds, document):
    for c in document["conditions"]:
        before = c["loadavg_before"][0]
        after = c.get("loadavg_after", [float("nan")])[0]
        print(f"\n### {c['condition']} (load average {before:.2f} before, "
              f"{after:.2f} after)\n")
        print(threshold_line(args, c["comparisons"]) + "\n")
        print(table(c["condition"], kinds, args.modes, args.metrics,
                    c["summary"]))


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
    for skipped in document["settings"]["not_measured"]:
        print(f"compare_bench: {skipped['mode']} by {skipped['metric']}: "
              f"not measured, {skipped['reason']}", flush=True)
    try:
        for condition in args.conditions:
            record_ = {"condition": condition, "measurements": [],
                       "comparisons": []}
            document["conditions"].append(record_)
            run_condition(args, record_, kinds, started)
            add_summary(args, record_, kinds)
            write(path, document)
        document["complete"] = True
    except BaseException:
        print(f"compare_bench: stopped; what was measured is in {path}",
              file=sys.stderr)
        raise
    finally:
        for record_ in document["conditions"]:
            add_summary(args, record_, kinds)
        document["seconds"] = round(time.monotonic() - started, 1)
        write(path, document)
        shutil.rmtree(os.path.join(args.out, "work"), ignore_errors=True)
    report(args, kinds, document)
    count = sum(len(c["comparisons"]) for c in document["conditions"])
    runs = sum(len(c["measurements"]) for c in document["conditions"])
    print(f"\n{count} comparison rows (the runs of {runs} comparisons, "
          f"each compared by its metrics) in {document['seconds']:.0f} s; "
          f"every one in {path}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
