#!/usr/bin/python3
"""`runner history` over a large stored history: the time to read N runs
of M benchmarks from a real s3rver (npm, tests/s3), with a cold record
cache and then warm, and the size of the page it writes.

The history is stored with the real `runner upload --store` (one upload per
run, in a faked GitHub push job per commit), each run a results-only folder
with M benchmarks of 20 rounds, 2% run-to-run noise and a +10% step in the
middle of every fifth benchmark. No other tool reads this store format, so
there is no reference tool to run beside it; the goal (docs/performance.md)
is under 10 s for 1000 runs from a warm cache.

    bench/history/store_bench.py --runner build/agent/runner --runs 1000 \\
        --benchmarks 50 [--workdir DIR] [--repeat 3]
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
S3RVER = os.path.join(HERE, '..', '..', 'tests', 's3', 'node_modules',
                      's3rver', 'bin', 's3rver.js')


def start_s3rver(data):
    log = open(os.path.join(data, 's3rver.log'), 'w+')
    proc = subprocess.Popen(
        ['node', S3RVER, '-d', os.path.join(data, 's3'), '-a', '127.0.0.1',
         '-p', '0', '--configure-bucket', 'bench'],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        log.seek(0)
        m = re.search(r'listening on (\S+)', log.read())
        if m:
            return proc, 'http://' + m.group(1)
        time.sleep(0.05)
    proc.kill()
    sys.exit('s3rver did not start (npm ci in tests/s3?)')


def results(run, runs, benchmarks, rng):
    out = []
    for b in range(benchmarks):
        level = 1000.0 * (1 + b)
        if b % 5 == 0 and run >= runs // 2:
            level *= 1.10
        level *= math.exp(rng.gauss(0, 0.02))
        times = sorted(level * math.exp(rng.gauss(0, 0.005)) for _ in range(20))
        out.append({
            'name': 'b%d' % b, 'uri': 'bench.cpp::b%d' % b,
            'config': {},
            'stats': {'min_ns': times[0], 'max_ns': times[-1],
                      'mean_ns': statistics.mean(times),
                      'stdev_ns': statistics.stdev(times),
                      'q1_ns': times[5], 'median_ns': times[10],
                      'q3_ns': times[15], 'rounds': 20, 'total_time': 1,
                      'iqr_outlier_rounds': 0, 'stdev_outlier_rounds': 0,
                      'iter_per_round': 100, 'warmup_iters': 0},
            'times_per_round_ns': [int(t * 100) for t in times],
            'iters_per_round': [100] * 20})
    return {'creator': {'name': 'store-bench', 'version': '1', 'pid': 1},
            'instrument': {'type': 'walltime'}, 'benchmarks': out}


def job_env(endpoint, commit, cache):
    env = dict(os.environ)
    env.update({
        'AWS_ENDPOINT_URL': endpoint, 'AWS_ACCESS_KEY_ID': 'S3RVER',
        'AWS_SECRET_ACCESS_KEY': 'S3RVER', 'AWS_REGION': 'us-east-1',
        'GITHUB_ACTIONS': 'true', 'GITLAB_CI': '',
        'GITHUB_REPOSITORY': 'acme/widgets', 'GITHUB_SHA': commit,
        'GITHUB_REF': 'refs/heads/main', 'GITHUB_REF_NAME': 'main',
        'GITHUB_EVENT_NAME': 'push', 'GITHUB_HEAD_REF': '',
        'GITHUB_BASE_REF': '', 'GITHUB_EVENT_PATH': '',
        'GITHUB_RUN_ID': '1', 'XDG_CACHE_HOME': cache})
    return env


def store_history(args, endpoint, work):
    rng = random.Random(1)
    folder = os.path.join(work, 'run')
    started = time.time()
    for run in range(args.runs):
        os.makedirs(os.path.join(folder, 'results'), exist_ok=True)
        with open(os.path.join(folder, 'results', '1.json'), 'w') as f:
            json.dump(results(run, args.runs, args.benchmarks, rng), f)
        subprocess.run([args.runner, 'upload', '--store', 's3://bench/ci',
                        folder], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL,
                       env=job_env(endpoint, '%040x' % (run + 1),
                                   os.path.join(work, 'cache')))
    return time.time() - started


def read_history(args, endpoint, work, cache):
    out = os.path.join(work, 'history')
    env = job_env(endpoint, '%040x' % 1, cache)
    started = time.time()
    p = subprocess.run([args.runner, 'history', '--store', 's3://bench/ci',
                        '--last', str(args.runs), '--compares', '0',
                        '--out', out, '--format', 'json'],
                       env=env, capture_output=True, text=True)
    took = time.time() - started
    if p.returncode != 0:
        sys.exit('runner history failed: ' + p.stderr)
    h = json.loads(p.stdout)
    true_steps = other = 0
    for s in h['benchmarks']:
        stepped = int(s['uri'].rsplit('::b', 1)[1]) % 5 == 0
        for c in s['changes']:
            if stepped and abs(c['run'] - args.runs // 2) <= 5:
                true_steps += 1
            else:
                other += 1
    return (took, len(h['runs']), '%d of %d, %d other' % (
        true_steps, (args.benchmarks + 4) // 5, other),
        os.path.getsize(os.path.join(out, 'index.html')))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runner', required=True)
    ap.add_argument('--runs', type=int, default=1000)
    ap.add_argument('--benchmarks', type=int, default=50)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--workdir')
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix='history-bench.', dir=args.workdir)
    proc, endpoint = start_s3rver(work)
    try:
        stored = store_history(args, endpoint, work)
        print('stored %d runs x %d benchmarks in %.1f s' %
              (args.runs, args.benchmarks, stored))
        cold = []
        for i in range(args.repeat):
            cold.append(read_history(args, endpoint, work,
                                     os.path.join(work, 'cold%d' % i)))
        warm_cache = os.path.join(work, 'cold0')
        warm = [read_history(args, endpoint, work, warm_cache)
                for _ in range(args.repeat)]
        print('| reading | median s | runs | steps found (other change points) | index.html |')
        print('|---|---:|---:|---:|---:|')
        for name, rows in (('cold record cache', cold),
                           ('warm record cache', warm)):
            print('| %s | %.2f | %d | %s | %.1f MB |' % (
                name, statistics.median(r[0] for r in rows), rows[0][1],
                rows[0][2], rows[0][3] / 1e6))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
