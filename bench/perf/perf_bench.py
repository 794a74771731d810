#!/usr/bin/python3
"""The figures of docs/performance.md, each against its reference tool, in one run.

  report    `runner report` (--format perf-script with 1, 2 and 3 threads,
            and the default summary + flamegraph outputs with 3, the
            default on 2 CPUs) against
            `perf script` and `cat FILE >/dev/null` on the same
            perf.pipedata, at each profile size: median wall time and peak
            RSS, as ratios. The profiles are recorded first with
            `runner exec -F 10000 -- workload threads 2 N` (N scaled to the
            wanted sample count), so their samples are real DWARF samples.
  sampling  lost samples of `runner exec` and `perf record` (same workload,
            same frequency and dwarf stack size, both on every CPU) at
            997/4000/10000 Hz x dwarf 8/16/32 KiB; the runner's own CPU
            while sampling, from its run summary (getrusage).
  finalize  bench/finalize: finalize time with a cold and a warm cache
            against perf's post-processing (perf script) of the example.
  size      bench/size: perf.pipedata and folder sizes with and without
            --compress against `perf record -z`.
  scale     (not in the default parts) what capture costs per sample, for
            1, 2 and all CPUs busy (`workload threads N`) at each of
            --scale-configs (Hz:STACK, STACK a dwarf size or fp): `runner
            exec` (and the --runner-before binary, when given) next to
            `perf record` on the command (per-CPU events, inherit; same
            event, user space only, same frequency and call graph; -B, so
            that perf does no build-id pass after the run), interleaved,
            --scale-reps times. Per configuration and tool (medians): bytes
            written per sample (perf.pipedata or perf.data size / samples),
            the runner's used stack per sample (mean dyn_size of the
            pipedata's samples), drain CPU per sample in us (runner: the
            drain thread's drain_cpu_us of perf.metadata; perf: perf
            record's whole CPU, getrusage minus the workload's own CPU and
            minus perf's CPU on a command that does no work, its start and
            end: about 150 ms here, so perf's figures need runs of some
            thousands of samples; '?' where they are within its noise), own
            CPU as a share of one core (runner: its run summary;
            perf: that CPU over the workload's wall time), lost samples (runner:
            perf.metadata's lost_samples; perf: perf report --stats's
            LOST_SAMPLES, and the LOST records' counts from perf script
            --show-lost-events), and the rate one core of drain holds at
            that cost: 1 s / (drain us per sample).

  perf_bench.py --runner build/agent/runner \\
      --harness build/integrations/exec-harness/exec-harness \\
      --workload build/bench/overhead/workload \\
      [--sizes 10000,100000,1000000] [--reps 3] [--parts report,sampling]
      [--parts scale --scale-seconds 2 --scale-reps 3
       --runner-before OLD/runner]
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scale  # noqa: E402  (bench/perf/scale.py, the scale part)


def run(argv, stdout=subprocess.DEVNULL, env=None, cwd=None):
    """Runs argv; returns (exit code, wall s, peak RSS MiB, stderr text)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=stdout, stderr=err, env=env,
                                cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        err.seek(0)
        text = err.read().decode(errors="replace")
    return os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss / 1024, text


def record_profile(runner, workload, samples, workdir):
    """A runner profile of about `samples` DWARF samples (10 kHz, 2 threads)."""
    # About 17,000 samples per second of the workload on 2 CPUs at 10 kHz,
    # and about 1.1 M iterations per second: scaled once, then recorded.
    iterations = max(100000, int(samples / 17000 * 1.1e6))
    folder = os.path.join(workdir, "profile-%d" % samples)
    code, _, _, err = run([runner, "exec", "--profile-folder", folder,
                           "-F", "10000", "--warmup-time", "0",
                           "--max-rounds", "1", "--", workload, "threads",
                           "2", str(iterations)])
    if code != 0:
        sys.exit("recording a profile failed:\n" + err)
    got = re.search(r"(\d+) samples, (\d+) lost", err)
    return folder, int(got.group(1)) if got else 0


def median_runs(argv, reps, stdout=subprocess.DEVNULL):
    walls, rss = [], 0.0
    for _ in range(reps):
        code, wall, peak, err = run(argv, stdout=stdout)
        if code != 0:
            sys.exit("%s failed (%d):\n%s" % (" ".join(argv), code, err))
        walls.append(wall)
        rss = max(rss, peak)
    return statistics.median(walls), rss


def report_part(args, workdir):
    print("== report: runner report vs perf script vs cat, same file "
          "(median of %d; peak RSS)" % args.reps)
    print("| samples | file | cat | perf script | runner perf-script "
          "1 / 2 / 3 thr | x perf script (1 / 2 / 3) | x cat (3 thr) | "
          "runner summary 3 thr | x perf script | RSS runner 1 / 3 thr | "
          "RSS perf | RSS ratio (1 / 3 thr) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        folder, samples = record_profile(args.runner, args.workload, size,
                                         workdir)
        pipedata = os.path.join(folder, "perf.pipedata")
        mib = os.path.getsize(pipedata) / (1 << 20)
        # Interleaved: one of each per repetition, so drift hits all alike.
        times = {k: [] for k in ("cat", "perf", "r1", "r2", "r3", "sum3")}
        rss = {k: 0.0 for k in times}
        commands = {
            "cat": ["cat", pipedata],
            "perf": ["perf", "script", "-f", "-i", pipedata],
            "r1": [args.runner, "report", "--threads", "1", "--format",
                   "perf-script", folder],
            "r2": [args.runner, "report", "--threads", "2", "--format",
                   "perf-script", folder],
            "r3": [args.runner, "report", "--threads", "3", "--format",
                   "perf-script", folder],
            "sum3": [args.runner, "report", "--threads", "3", folder],
        }
        for _ in range(args.reps):
            for key, argv in commands.items():
                wall, peak = median_runs(argv, 1)
                times[key].append(wall)
                rss[key] = max(rss[key], peak)
        m = {k: statistics.median(v) for k, v in times.items()}
        print("| %d | %.0f MiB | %.3f s | %.3f s | %.3f / %.3f / %.3f s | "
              "%.1fx / %.1fx / %.1fx | %.2fx | %.3f s | %.1fx | "
              "%.1f / %.1f MiB | %.1f MiB | %.2f / %.2f |" % (
                  samples, mib, m["cat"], m["perf"], m["r1"], m["r2"],
                  m["r3"], m["perf"] / m["r1"], m["perf"] / m["r2"],
                  m["perf"] / m["r3"], m["r3"] / m["cat"], m["sum3"],
                  m["perf"] / m["sum3"], rss["r1"], rss["r3"], rss["perf"],
                  rss["r1"] / rss["perf"], rss["r3"] / rss["perf"]))
        sys.stdout.flush()
        shutil.rmtree(folder, ignore_errors=True)


def perf_lost(data_file):
    """Lost samples of a perf.data file (perf report --stats)."""
    out = subprocess.run(["perf", "report", "--stats", "-i", data_file],
                         capture_output=True, text=True).stdout
    lost = 0
    for line in out.splitlines():
        got = re.match(r"\s*LOST_SAMPLES events:\s*(\d+)", line)
        if got:
            lost = max(lost, int(got.group(1)))
        got = re.match(r"\s*LOST events:\s*(\d+)", line)
        if got and int(got.group(1)) > 0:
            lost = max(lost, 1)
    if lost == 0:
        return 0
    # LOST records count samples in their payload: perf script shows them.
    script = subprocess.run(["perf", "script", "-i", data_file,
                             "--show-lost-events", "-F", "comm"],
                            capture_output=True, text=True).stdout
    per_record = sum(int(n) for n in re.findall(r"LOST (\d+) events", script))
    return max(lost, per_record)


def sampling_part(args, workdir):
    print("\n== sampling: lost samples, runner exec vs perf record (same "
          "workload: threads 2 %d; one run each)" % args.sampling_work)
    print("| Hz | dwarf | runner samples | runner lost | perf samples | "
          "perf lost | runner own CPU | drain nice |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for hz in (997, 4000, 10000):
        for stack in (8192, 16384, 32768):
            folder = os.path.join(workdir, "s-%d-%d" % (hz, stack))
            code, _, _, err = run([
                args.runner, "exec", "--profile-folder", folder, "-F",
                str(hz), "--call-graph", "dwarf,%d" % stack, "--warmup-time",
                "0", "--max-rounds", "1", "--",
                args.workload, "threads", "2", str(args.sampling_work)])
            got = re.search(r"(\d+) samples, (\d+) lost", err)
            cpu = re.search(r"(\d+\.\d+)% of one core", err)
            nice = re.search(r"nice (-?\d+)\)", err)
            shutil.rmtree(folder, ignore_errors=True)
            data = os.path.join(workdir, "perf-%d-%d.data" % (hz, stack))
            pcode, _, _, perr = run([
                "perf", "record", "-q", "-F", str(hz), "--call-graph",
                "dwarf,%d" % stack, "-o", data, "--", args.workload,
                "threads", "2", str(args.sampling_work)])
            psamples = 0
            if pcode == 0:
                out = subprocess.run(["perf", "report", "--stats", "-i",
                                      data], capture_output=True,
                                     text=True).stdout
                m = re.search(r"SAMPLE events:\s*(\d+)", out)
                psamples = int(m.group(1)) if m else 0
            plost = perf_lost(data) if pcode == 0 else -1
            if os.path.exists(data):
                os.remove(data)
            print("| %d | %d KiB | %s | %s | %d | %d | %s | %s |" % (
                hz, stack >> 10, got.group(1) if got else "?",
                got.group(2) if got else "?", psamples, plost,
                (cpu.group(1) + "%") if cpu else "?",
                nice.group(1) if nice else "?"))
            sys.stdout.flush()


def sub_bench(script, argv):
    """Runs another bench of bench/ (its table goes to our output)."""
    path = os.path.join(HERE, "..", script)
    if not os.path.exists(path):
        print("(%s: not present)" % script)
        return
    sys.stdout.flush()
    subprocess.run(["/usr/bin/python3", path] + argv, check=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", required=True)
    parser.add_argument("--workload", required=True)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sampling-work", type=int, default=2000000)
    parser.add_argument("--harness", required=True,
                        help="exec-harness, for the size bench")
    parser.add_argument("--parts", default="report,sampling,finalize,size",
                        help="any of report,sampling,finalize,size,scale")
    parser.add_argument("--scale-configs",
                        default="997:8192,10000:8192,10000:32768,10000:fp",
                        help="scale part: HZ:STACK,... (STACK: a dwarf "
                        "size in bytes, or fp)")
    parser.add_argument("--scale-seconds", type=float, default=2.0,
                        help="scale part: seconds of work per run")
    parser.add_argument("--scale-reps", type=int, default=3)
    parser.add_argument("--runner-before", default=None,
                        help="scale part: a second runner binary (e.g. "
                        "main's) run in the same interleaved loop")
    parser.add_argument("--workdir", default=None,
                        help="where profiles go (default: a temporary "
                        "directory; 1M samples need about 9 GB)")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.runner = os.path.abspath(args.runner)
    args.workload = os.path.abspath(args.workload)
    parts = args.parts.split(",")
    print("machine: %s, %d CPUs, %s" % (
        os.uname().machine, os.cpu_count(),
        subprocess.run(["perf", "--version"], capture_output=True,
                       text=True).stdout.strip()))
    workdir = tempfile.mkdtemp(prefix="perf-bench-", dir=args.workdir)
    try:
        if "report" in parts:
            report_part(args, workdir)
        if "sampling" in parts:
            sampling_part(args, workdir)
        if "finalize" in parts:
            print("\n== finalize: cold and warm cache vs perf's "
                  "post-processing")
            example = os.path.join(os.path.dirname(args.runner), "..",
                                   "integrations", "examples",
                                   "bench_example")
            sub_bench("finalize/finalize_bench.py",
                      ["--runner", args.runner, "--", example, "--rounds",
                       "2"])
        if "scale" in parts:
            scale.scale_part(args, workdir)
        if "size" in parts:
            print("\n== size: perf.pipedata with and without --compress vs "
                  "perf record -z")
            sub_bench("size/size_bench.py",
                      ["--runner", args.runner, "--harness", args.harness])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
