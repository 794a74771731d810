#!/bin/sh
# Re-records the golden corpus (tests/golden/README.md). Run by hand, on an
# otherwise idle machine, as root or with kernel.perf_event_paranoid <= 2:
#
#   tests/golden/make-corpus.sh [BUILD_DIR]        (default: build)
#
# then review `git status tests/golden` and `git diff tests/golden/expected`
# and commit everything under tests/golden. It
#   1. builds the runner and the programs recorded below;
#   2. copies the small ones (golden_prog, spinner, child_prog) into
#      tests/golden/bin/ and records them from there, so that the committed
#      ELF is the one each folder names (by path and build-id);
#   3. records each folder of tests/golden/folders/ with the real runner, then
#      keeps only what `runner report` reads: perf.pipedata, perf.metadata,
#      ExecutionTimestamps.msgpack, *.symbols.map, *.unwind_data and
#      perf-<pid>.map (runner.log and results/ are dropped; the `missing`
#      folder also loses two artifacts on purpose), and drops from
#      perf.metadata the debug_info of files outside this repository (the
#      system libraries: it is most of the file and depends on the -dbg
#      packages of the recording machine; the report never reads debug_info);
#   4. rewrites tests/golden/expected/ by running the golden test with
#      UPDATE_GOLDEN=1.
# Needs python3 (for step 3). Low frequency, short runs and small DWARF stack
# copies keep each perf.pipedata well under 1 MiB.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build=$repo/$build ;; esac
golden=$repo/tests/golden
runner=$build/agent/runner

ninja -C "$build" agent/runner tests/golden/golden_prog tests/e2e/spinner \
  tests/e2e/child_prog tests/e2e/mp_bench integrations/examples/bench_example \
  integrations/exec-harness/exec-harness tests/golden/test_golden

mkdir -p "$golden/bin"
for program in tests/golden/golden_prog tests/e2e/spinner tests/e2e/child_prog; do
  cp "$build/$program" "$golden/bin/"
done
bin=$golden/bin

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fifo_dir=$stage/fifos
mkdir "$fifo_dir"

# record NAME RUNNER-ARGS... : records into $stage/NAME.
record() {
  name=$1
  shift
  echo "== $name"
  (cd "$stage" && "$runner" "$@")
}

golden_run() {
  name=$1
  shift
  record "$name" run --profile-folder "$stage/$name" --fifo-dir "$fifo_dir" \
    -F 499 --allow-empty "$@"
}

golden_run dwarf --call-graph dwarf,4096 -- "$bin/golden_prog" bench
golden_run fp --call-graph fp -- "$bin/golden_prog" bench
golden_run jit --call-graph fp -- "$bin/golden_prog" jit
golden_run unknown --call-graph dwarf,4096 -- "$bin/golden_prog" jit --no-map
golden_run truncated --call-graph dwarf,2048 -- "$bin/golden_prog" deep
golden_run missing --call-graph dwarf,4096 -- "$bin/golden_prog" bench qsort
record example run --profile-folder "$stage/example" --fifo-dir "$fifo_dir" \
  -F 499 --call-graph dwarf,4096 -- \
  "$build/integrations/examples/bench_example" --rounds 2 --scale 0.25
record multiproc run --profile-folder "$stage/multiproc" \
  --fifo-dir "$fifo_dir" -F 499 --call-graph dwarf,4096 -- \
  "$build/tests/e2e/mp_bench" "$bin/child_prog" 40
record exec exec --profile-folder "$stage/exec" --fifo-dir "$fifo_dir" \
  -F 499 --call-graph dwarf,4096 --name spinner --warmup-time 0 \
  --max-rounds 4 -- "$bin/spinner" 25

# The JIT's perf map stays in /tmp after its process ended.
for map in "$stage"/jit/perf-*.map; do
  rm -f "/tmp/$(basename "$map")"
done

rm -rf "$golden/folders" "$golden/expected"
mkdir -p "$golden/folders"
for folder in "$stage"/*/; do
  folder=${folder%/}
  name=$(basename "$folder")
  [ "$name" = fifos ] && continue
  rm -rf "$folder/results" "$folder/runner.log"
  python3 - "$folder/perf.metadata" "$repo/" <<'EOF'
import json, sys
path, repo = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as f:
    text = f.read()
meta = json.loads(text)
infos = meta.get("debug_info", {})
dropped = {key for key, info in infos.items()
           if not info.get("object_path", "").startswith(repo)}
meta["debug_info"] = {k: v for k, v in infos.items() if k not in dropped}
by_pid = meta.get("mapped_process_debug_info_by_pid", {})
for pid, entries in by_pid.items():
    by_pid[pid] = [e for e in entries if e.get("debug_info_key") not in dropped]
with open(path, "w", encoding="utf-8") as f:
    f.write(json.dumps(meta, ensure_ascii=False, separators=(",", ":")))
    if text.endswith("\n"):
        f.write("\n")
EOF
  mv "$folder" "$golden/folders/$name"
done
# `missing`: artifacts lost after the run (the one edit of a recording): the
# program's symbols (its frames become golden_prog+0x...) and libc's unwind
# data (unwinding stops in qsort).
rm "$golden/folders/missing/"*__golden_prog.symbols.map \
  "$golden/folders/missing/"*__libc.so.6.unwind_data

UPDATE_GOLDEN=1 RUNNER_BIN=$runner GOLDEN_DIR=$golden \
  "$build/tests/golden/test_golden"
du -sh --apparent-size "$golden/folders"/* "$golden/expected" "$golden/bin"
