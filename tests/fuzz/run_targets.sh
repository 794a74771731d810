#!/usr/bin/env bash
# Runs libFuzzer targets (`make fuzz`): each BUILD/tests/fuzz/fuzz_<target>
# for SECONDS on its seed corpus (tests/fuzz/corpus/<target>) plus what
# earlier runs found (BUILD/corpus/<target>), JOBS targets at a time (each
# is one process on one CPU). Any crash, leak, timeout or out-of-memory
# fails that target; its input is kept in BUILD/crashes/ and the last lines
# of its log are printed. Exits 1 when a target failed.
#
#   tests/fuzz/run_targets.sh BUILD SECONDS JOBS TARGET...
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 BUILD SECONDS JOBS TARGET..." >&2
  exit 2
fi
build=$1 seconds=$2 jobs=$3
shift 3
mkdir -p "$build/crashes"

run_one() {
  local build=$1 seconds=$2 t=$3 dict=
  mkdir -p "$build/corpus/$t"
  rm -f "$build/fuzz_$t.failed"
  test -f "tests/fuzz/$t.dict" && dict=-dict=tests/fuzz/$t.dict
  ASAN_OPTIONS=detect_leaks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $dict \
      -artifact_prefix="$build/crashes/$t-" \
      "$build/corpus/$t" "tests/fuzz/corpus/$t" \
      > "$build/fuzz_$t.log" 2>&1 || touch "$build/fuzz_$t.failed"
}
export -f run_one

printf '%s\n' "$@" |
  xargs -P "$jobs" -I{} bash -c 'run_one "$0" "$1" "$2"' "$build" "$seconds" {}

failed=""
for t in "$@"; do
  if [ -f "$build/fuzz_$t.failed" ]; then
    failed="$failed $t"
    echo "fuzz_$t: FAILED"
    tail -n 40 "$build/fuzz_$t.log"
  else
    echo "fuzz_$t: $seconds s, $(grep -h '^stat::number_of_executed_units' \
      "$build/fuzz_$t.log" | awk '{print $2}') inputs, clean"
  fi
done
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed (inputs in $build/crashes/)"
  exit 1
fi
echo "fuzz: every target ran $seconds s clean"
