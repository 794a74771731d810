"""perf_bench.py's `scale` part: what capture costs per sample, runner exec
(and an older runner) next to perf record, for 1, 2 and all CPUs busy.

What each figure is and where it comes from is in perf_bench.py's
docstring; this module only measures and prints.
"""

import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

# perf_event.h: the sample_type bits a SAMPLE record's layout depends on, in
# the order their fields appear.
SAMPLE_IDENTIFIER = 1 << 16
SAMPLE_IP = 1 << 0
SAMPLE_TID = 1 << 1
SAMPLE_TIME = 1 << 2
SAMPLE_ADDR = 1 << 3
SAMPLE_READ = 1 << 4
SAMPLE_CALLCHAIN = 1 << 5
SAMPLE_ID = 1 << 6
SAMPLE_CPU = 1 << 7
SAMPLE_PERIOD = 1 << 8
SAMPLE_STREAM_ID = 1 << 9
SAMPLE_RAW = 1 << 10
SAMPLE_BRANCH_STACK = 1 << 11
SAMPLE_REGS_USER = 1 << 12
SAMPLE_STACK_USER = 1 << 13
RECORD_SAMPLE = 9
RECORD_HEADER_ATTR = 64


def _sample_dyn_size(record, sample_type, regs_count):
    """dyn_size of one SAMPLE record's user stack, or None when it has none
    (or uses a layout this reader does not follow)."""
    if sample_type & (SAMPLE_READ | SAMPLE_BRANCH_STACK):
        return None
    pos = 8
    for bit in (SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME,
                SAMPLE_ADDR, SAMPLE_ID, SAMPLE_STREAM_ID, SAMPLE_CPU,
                SAMPLE_PERIOD):
        if sample_type & bit:
            pos += 8
    if sample_type & SAMPLE_CALLCHAIN:
        (nr,) = struct.unpack_from("<Q", record, pos)
        pos += 8 + 8 * nr
    if sample_type & SAMPLE_RAW:
        (raw,) = struct.unpack_from("<I", record, pos)
        pos += 4 + raw
    if sample_type & SAMPLE_REGS_USER:
        (abi,) = struct.unpack_from("<Q", record, pos)
        pos += 8 + (8 * regs_count if abi else 0)
    if not sample_type & SAMPLE_STACK_USER or pos + 8 > len(record):
        return None
    (size,) = struct.unpack_from("<Q", record, pos)
    if size == 0:
        return 0
    if pos + 16 + size > len(record):
        return None
    (dyn,) = struct.unpack_from("<Q", record, pos + 8 + size)
    return dyn


def pipedata_stack_use(path):
    """(samples read, mean dyn_size) of a perf.pipedata (perf's pipe format,
    uncompressed): the used part of each sample's stack copy."""
    attrs = {}  # id -> (sample_type, number of user registers)
    lone = None  # the only attr with a user stack, for samples without ids
    count, total = 0, 0
    with open(path, "rb") as f:
        if f.read(16)[:8] != b"PERFILE2":
            return 0, None
        while True:
            head = f.read(8)
            if len(head) < 8:
                break
            rtype, _, size = struct.unpack("<IHH", head)
            if size < 8:
                break
            body = f.read(size - 8)
            record = head + body
            if rtype == RECORD_HEADER_ATTR and len(record) >= 8 + 96:
                attr_size = struct.unpack_from("<I", record, 12)[0]
                sample_type = struct.unpack_from("<Q", record, 8 + 24)[0]
                regs = bin(struct.unpack_from("<Q", record, 8 + 80)[0]).count(
                    "1")
                ids = record[8 + attr_size:]
                for i in range(0, len(ids) - 7, 8):
                    attrs[struct.unpack_from("<Q", ids, i)[0]] = (sample_type,
                                                                  regs)
                if sample_type & SAMPLE_STACK_USER:
                    lone = (sample_type, regs)
            elif rtype == RECORD_SAMPLE:
                layout = lone
                if lone and lone[0] & SAMPLE_IDENTIFIER and len(record) >= 16:
                    layout = attrs.get(struct.unpack_from("<Q", record, 8)[0],
                                       lone)
                if layout is None:
                    continue
                dyn = _sample_dyn_size(record, layout[0], layout[1])
                if dyn is not None:
                    count += 1
                    total += dyn
    return count, (total / count if count else None)


def perf_data_stats(path):
    """(samples, lost samples) of a perf.data: the SAMPLE events of `perf
    report --stats`; lost: the larger of its LOST_SAMPLES count (perf
    record's closing records, from the kernel's lost counter) and the sum of
    the LOST records' counts (perf script --show-lost-events)."""
    out = subprocess.run(["perf", "report", "--stats", "-i", path],
                         capture_output=True, text=True).stdout
    samples = re.search(r"\bSAMPLE events:\s*(\d+)", out)
    # "LOST_SAMPLES events" is in the aggregated stats (how many records)
    # and under the event's own stats (how many samples they lost).
    lost = max([int(n) for n in re.findall(r"LOST_SAMPLES events:\s*(\d+)",
                                           out)] + [0])
    got = re.search(r"\bLOST events:\s*(\d+)", out)
    if got and int(got.group(1)) > 0:
        script = subprocess.run(
            ["perf", "script", "-i", path, "--show-lost-events", "-F",
             "comm"], capture_output=True, text=True).stdout
        lost = max(lost, sum(int(n) for n in re.findall(
            r"PERF_RECORD_LOST lost (\d+)", script)))
    return (int(samples.group(1)) if samples else 0), lost


def has_pmu(runner):
    out = subprocess.run([runner, "doctor"], capture_output=True,
                         text=True).stdout
    return "will sample hardware cycles" in out


def calibrate(workload, workdir):
    """Iterations of `workload threads 1` per second of one busy CPU."""
    result = os.path.join(workdir, "calibrate.txt")
    units = 100000
    env = dict(os.environ, WORKLOAD_RESULT=result)
    subprocess.run([workload, "threads", "1", str(units)], env=env,
                   stdout=subprocess.DEVNULL, check=True)
    with open(result) as f:
        wall_ns = int(f.read().split()[0])
    return units / (wall_ns / 1e9)


def copy_runner(runner, workdir):
    """A copy of `runner` and its exec-harness in workdir, so that a rebuild
    of that tree during the bench does not pull it away."""
    runner = os.path.abspath(runner)
    here = os.path.dirname(runner)
    target = os.path.join(workdir, "before")
    os.makedirs(target, exist_ok=True)
    shutil.copy2(runner, os.path.join(target, "runner"))
    for harness in (os.path.join(here, "exec-harness"),
                    os.path.join(here, "..", "integrations", "exec-harness",
                                 "exec-harness")):
        if os.path.exists(harness):
            shutil.copy2(harness, os.path.join(target, "exec-harness"))
            break
    return os.path.join(target, "runner")


def call_graph_args(stack):
    return ["fp"] if stack == "fp" else ["dwarf,%d" % stack]


def run_runner(runner, event, hz, stack, threads, units, args, workdir):
    """One runner exec: a dict of the figures, or None when it failed."""
    folder = os.path.join(workdir, "runner-profile")
    shutil.rmtree(folder, ignore_errors=True)
    result = os.path.join(workdir, "result.txt")
    env = dict(os.environ, WORKLOAD_RESULT=result)
    argv = [runner, "exec", "--profile-folder", folder, "--event", event,
            "-F", str(hz), "--call-graph"] + call_graph_args(stack) + [
            "--warmup-time", "0", "--max-rounds", "1", "--",
            args.workload, "threads", str(threads), str(units)]
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    except OSError as error:
        print("  (%s: %s)" % (runner, error))
        return None
    if proc.returncode != 0:
        print("  (%s failed: %s)" % (os.path.basename(runner),
                                     proc.stderr.strip()[-300:]))
        return None
    try:
        with open(os.path.join(folder, "perf.metadata")) as f:
            meta = json.load(f).get("runner", {})
    except (OSError, ValueError):
        meta = {}
    cpu = re.search(r"(\d+\.\d+)% of one core", proc.stderr)
    pipedata = os.path.join(folder, "perf.pipedata")
    samples = meta.get("samples", 0)
    figures = {
        "samples": samples,
        "lost": meta.get("lost_samples", 0),
        "bytes": os.path.getsize(pipedata) if os.path.exists(pipedata) else 0,
        "drain_us": meta.get("drain_cpu_us"),
        "share": float(cpu.group(1)) if cpu else None,
        "used_stack": None,
    }
    if stack != "fp" and os.path.exists(pipedata):
        figures["used_stack"] = pipedata_stack_use(pipedata)[1]
    shutil.rmtree(folder, ignore_errors=True)
    return figures


def run_perf(event, hz, stack, threads, units, args, workdir, fixed_ns=0.0):
    """One perf record of the same command: a dict of the figures, or None
    when it failed. fixed_ns: perf's CPU on a command that does no work
    (its start and its end), taken out of the drain figures."""
    data = os.path.join(workdir, "perf.data")
    result = os.path.join(workdir, "result.txt")
    env = dict(os.environ, WORKLOAD_RESULT=result)
    argv = ["perf", "record", "-q", "-B", "-e", event + ":u", "-F", str(hz),
            "--call-graph"] + call_graph_args(stack) + [
            "-o", data, "--", args.workload, "threads", str(threads),
            str(units)]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        err.seek(0)
        text = err.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        print("  (perf record failed: %s)" % text.strip()[-300:])
        return None
    with open(result) as f:
        wall_ns, work_cpu_ns = (int(x) for x in f.read().split()[:2])
    # perf's rusage holds its reaped child's too: the workload's CPU (its
    # own figure, over the benchmark window) is taken out.
    perf_ns = (usage.ru_utime + usage.ru_stime) * 1e9 - work_cpu_ns - fixed_ns
    samples, lost = perf_data_stats(data)
    figures = {
        "samples": samples,
        "lost": lost,
        "bytes": os.path.getsize(data),
        # Within the noise of perf's fixed cost (few samples): unknown.
        "drain_us": perf_ns / 1e3 if perf_ns > 0 else None,
        "share": 100.0 * perf_ns / wall_ns if wall_ns and perf_ns > 0 else None,
        "used_stack": None,
        "cpu_ns": perf_ns + fixed_ns,
    }
    os.remove(data)
    return figures


def perf_fixed_ns(event, hz, stack, args, workdir):
    """perf record's own CPU on a workload that does (almost) no work: what
    it spends starting (reading /proc, mapping its buffers) and ending,
    independent of the samples. The median of three runs."""
    runs = [run_perf(event, hz, stack, 1, 1, args, workdir)
            for _ in range(3)]
    values = [r["cpu_ns"] for r in runs if r]
    return statistics.median(values) if values else 0.0


def summarize(runs):
    """Medians over the repetitions of one tool in one configuration."""
    runs = [r for r in runs if r]
    if not runs:
        return None

    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    out = {
        "samples": med([r["samples"] for r in runs]),
        "lost": med([r["lost"] for r in runs]),
        "bytes_per_sample": med([r["bytes"] / r["samples"] for r in runs
                                 if r["samples"]]),
        "used_stack": med([r["used_stack"] for r in runs]),
        "drain_us_per_sample": med([r["drain_us"] / r["samples"] for r in runs
                                    if r["samples"] and
                                    r["drain_us"] is not None]),
        "share": med([r["share"] for r in runs]),
        "reps": len(runs),
    }
    return out


def fmt(value, spec, suffix=""):
    return "?" if value is None else (spec % value) + suffix


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "?"
    return "%.2fx" % (a / b)


def print_row(busy, hz, stack, tool, s, base, before=None):
    stack_text = "fp" if stack == "fp" else "dwarf,%d" % stack
    if s is None:
        print("| %d | %d x %s | %s | failed |||||||" % (busy, hz, stack_text,
                                                        tool))
        return
    holds = (1e6 / s["drain_us_per_sample"]
             if s["drain_us_per_sample"] else None)
    holds_text = "?" if holds is None else (
        "about %d samples/s: e.g. %.1f CPUs at 10 kHz" % (holds, holds / 1e4))
    ratios = ratio(s["drain_us_per_sample"],
                   base["drain_us_per_sample"] if base else None) + " perf"
    if before is not None and before is not s:
        ratios += ", %s before" % ratio(s["drain_us_per_sample"],
                                        before["drain_us_per_sample"])
    print("| %d | %d x %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s |" % (
        busy, hz, stack_text, tool, fmt(s["samples"], "%d"),
        fmt(s["lost"], "%d"), fmt(s["bytes_per_sample"], "%.0f"),
        fmt(s["used_stack"], "%.0f"),
        fmt(s["drain_us_per_sample"], "%.2f"), ratios,
        fmt(s["share"], "%.2f", "%"), holds_text))


def scale_part(args, workdir):
    cpus = os.cpu_count() or 1
    busy_levels = sorted({1, 2, cpus} if cpus >= 2 else {1})
    configs = []
    for item in args.scale_configs.split(","):
        hz, _, stack = item.partition(":")
        configs.append((int(hz), stack if stack == "fp" else int(stack)))
    event = "cycles" if has_pmu(args.runner) else "cpu-clock"
    per_second = calibrate(args.workload, workdir)
    tools = [("runner", args.runner)]
    if args.runner_before:
        tools.insert(0, ("before", copy_runner(args.runner_before, workdir)))
    print("\n== scale: capture cost per sample, runner exec vs perf record "
          "(event %s, user space; %.1f s per run, %d reps interleaved; "
          "medians; x perf / x before: drain us per sample over perf record's "
          "and the before runner's)" % (
              event, args.scale_seconds, args.scale_reps))
    print("| busy CPUs | Hz x stack | tool | samples | lost | bytes/sample | "
          "used stack/sample | drain us/sample (x perf) | own CPU (one "
          "core) | one core of drain holds |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
    for busy in busy_levels:
        units = int(per_second * args.scale_seconds * busy)
        for hz, stack in configs:
            runs = {name: [] for name, _ in tools}
            runs["perf"] = []
            fixed = perf_fixed_ns(event, hz, stack, args, workdir)
            for _ in range(args.scale_reps):
                for name, binary in tools:
                    runs[name].append(run_runner(binary, event, hz, stack,
                                                 busy, units, args, workdir))
                runs["perf"].append(run_perf(event, hz, stack, busy, units,
                                             args, workdir, fixed))
            perf = summarize(runs["perf"])
            before = summarize(runs["before"]) if "before" in runs else None
            for name, _ in tools:
                print_row(busy, hz, stack, name, summarize(runs[name]), perf,
                          before)
            print_row(busy, hz, stack, "perf record", perf, perf)
            sys.stdout.flush()
