#!/usr/bin/python3
"""How often `runner compare` raises false alarms and catches slowdowns.

Pairs of fresh `runner exec` runs of tests/e2e/programs/compare_workload.c:
A/A pairs (the same program twice) and A/B pairs where B is the program made
5% or 10% slower (`--slower PCT`: more work in stage_hash only). Each pair is
compared three ways, on the same data:

  runner    `runner compare BASE HEAD --format json`: its verdict.
  u-test    Google Benchmark compare.py's rule: scipy's two-sided
            Mann-Whitney U test on the raw per-round times (the results
            JSON's times_per_round_ns / iters_per_round), p < 0.05. The test
            has no direction; a detection also needs HEAD's median above
            BASE's.
  5%        a plain threshold: median(HEAD) / median(BASE) - 1 > +5% is a
            regression, < -5% an improvement.

A false alarm is an A/A pair called a regression or an improvement; a
detection is an A/B pair called a regression. The two runs of a pair
alternate their order from one pair to the next (base first, then head
first), and the pair kinds are interleaved, so that machine drift hits every
kind alike. Prints a table and writes it, with every pair's numbers, as JSON.

  compare_bench.py --runner build/agent/runner \\
      --harness build/integrations/exec-harness/exec-harness \\
      --workload build/tests/e2e/compare_workload [--pairs 20] [--out DIR]
"""

import argparse
import contextlib
import fcntl
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from scipy.stats import mannwhitneyu

ALPHA = 0.05
THRESHOLD = 0.05


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runner", required=True)
    p.add_argument("--harness", required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--pairs", type=int, default=20,
                   help="pairs of each kind (default 20)")
    p.add_argument("--slowdowns", default="5,10",
                   help="A/B slowdowns in percent (default 5,10)")
    p.add_argument("--rounds", type=int, default=40,
                   help="measured rounds per run (default 40)")
    p.add_argument("--warmup", default="100ms",
                   help="warmup per run (default 100ms)")
    p.add_argument("--out", default="bench-compare",
                   help="work folder; the table goes to OUT/compare_bench.json")
    p.add_argument("--lock", default="",
                   help="a file to flock around each pair (shared machines)")
    return p.parse_args()


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


def record(args, folder, slower):
    """One `runner exec` of the workload; its benchmark's per-round times."""
    shutil.rmtree(folder, ignore_errors=True)
    command = [args.workload] + (["--slower", str(slower)] if slower else [])
    argv = [args.runner, "exec", "--profile-folder", folder,
            "--name", "workload", "--warmup-time", args.warmup,
            "--max-rounds", str(args.rounds), "--"] + command
    env = dict(os.environ, RUNNER_EXEC_HARNESS=args.harness)
    run = subprocess.run(argv, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"runner exec failed ({run.returncode}): {run.stderr}")
    [results] = glob.glob(os.path.join(folder, "results", "*.json"))
    with open(results) as f:
        [bench] = json.load(f)["benchmarks"]
    return [t / n for t, n in zip(bench["times_per_round_ns"],
                                  bench["iters_per_round"])]


def runner_compare(args, base, head, out):
    run = subprocess.run([args.runner, "compare", base, head, "--out", out,
                          "--format", "json"], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"runner compare failed ({run.returncode}): {run.stderr}")
    [bench] = json.loads(run.stdout)["benchmarks"]
    return {"verdict": bench["verdict"], "change": bench["change"],
            "ci_low": bench["ci_low"], "ci_high": bench["ci_high"],
            "p_value": bench["p_value"], "exit_code": run.returncode}


def u_test_verdict(base, head):
    p = mannwhitneyu(base, head, alternative="two-sided").pvalue
    if p >= ALPHA:
        return "unchanged", p
    return ("regression" if statistics.median(head) > statistics.median(base)
            else "improvement"), p


def threshold_verdict(change):
    if change > THRESHOLD:
        return "regression"
    if change < -THRESHOLD:
        return "improvement"
    return "unchanged"


def run_pair(args, kind, slower, index):
    """Two fresh runs (order alternating with `index`), three verdicts."""
    work = os.path.join(args.out, "work")
    base_dir, head_dir = os.path.join(work, "base"), os.path.join(work, "head")
    order = [(base_dir, 0), (head_dir, slower)]
    if index % 2 == 1:
        order.reverse()
    with maybe_locked(args.lock):
        times = {folder: record(args, folder, pct) for folder, pct in order}
        ours = runner_compare(args, base_dir, head_dir,
                              os.path.join(work, "compare"))
    base, head = times[base_dir], times[head_dir]
    change = statistics.median(head) / statistics.median(base) - 1
    u_verdict, u_p = u_test_verdict(base, head)
    return {"kind": kind, "slower_pct": slower, "index": index,
            "base_first": index % 2 == 0, "runner": ours,
            "u_test": {"verdict": u_verdict, "p_value": u_p},
            "threshold": {"verdict": threshold_verdict(change),
                          "median_change": change},
            "base_ns": base, "head_ns": head}


def rates(pairs, kind):
    """Per method: how many pairs of `kind` it flagged, out of how many."""
    chosen = [p for p in pairs if p["kind"] == kind]
    out = {}
    for method in ("runner", "u_test", "threshold"):
        verdicts = [p[method]["verdict"] for p in chosen]
        if kind == "A/A":
            flagged = sum(v in ("regression", "improvement") for v in verdicts)
        else:
            flagged = sum(v == "regression" for v in verdicts)
        out[method] = {"flagged": flagged, "pairs": len(chosen),
                       "rate": flagged / len(chosen) if chosen else None}
    changes = [p["runner"]["change"] for p in chosen
               if p["runner"]["change"] is not None]
    out["runner_median_change"] = statistics.median(changes) if changes else None
    return out


def table(summary):
    lines = ["| pairs | measure | runner compare | compare.py U test (p<0.05) "
             "| 5% threshold on medians | runner's median change |",
             "|---|---|---|---|---|---|"]
    for kind, r in summary.items():
        measure = "false alarms" if kind == "A/A" else "detected"
        cells = [f"{r[m]['flagged']}/{r[m]['pairs']}"
                 for m in ("runner", "u_test", "threshold")]
        change = r["runner_median_change"]
        lines.append(f"| {kind} | {measure} | " + " | ".join(cells) +
                     f" | {'' if change is None else f'{change:+.1%}'} |")
    return "\n".join(lines)


def main():
    args = parse_args()
    slowdowns = [int(s) for s in args.slowdowns.split(",") if s]
    kinds = [("A/A", 0)] + [(f"A/B {s}%", s) for s in slowdowns]
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    pairs = []
    for index in range(args.pairs):
        for kind, slower in kinds:
            pair = run_pair(args, kind, slower, index)
            pairs.append(pair)
            change = pair["runner"]["change"]
            print(f"[{time.monotonic() - started:6.0f} s] {kind:9} "
                  f"#{index + 1:2}: runner {pair['runner']['verdict']} "
                  f"({'-' if change is None else f'{change:+.3f}'}), u-test "
                  f"{pair['u_test']['verdict']} (p {pair['u_test']['p_value']:.3g}), "
                  f"5% {pair['threshold']['verdict']} "
                  f"({pair['threshold']['median_change']:+.3f})", flush=True)
    shutil.rmtree(os.path.join(args.out, "work"), ignore_errors=True)
    summary = {kind: rates(pairs, kind) for kind, _ in kinds}
    elapsed = time.monotonic() - started
    document = {"rounds": args.rounds, "warmup": args.warmup,
                "alpha": ALPHA, "threshold": THRESHOLD,
                "seconds": round(elapsed, 1), "summary": summary,
                "pairs": pairs}
    path = os.path.join(args.out, "compare_bench.json")
    with open(path, "w") as f:
        json.dump(document, f, indent=2)
        f.write("\n")
    print()
    print(table(summary))
    print(f"\n{len(pairs)} pairs in {elapsed:.0f} s; every pair in {path}")


if __name__ == "__main__":
    main()
