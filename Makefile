# The two commands of the README:
#   make demo   install what is missing, build the runner and the example
#               benchmark, profile it
#   make test   install what is missing, build everything, run every test
# and the install paths: `make install` (meson install into PREFIX, DESTDIR
# honoured) and `make deb` (the Debian package of debian/).
# Everything comes from Debian bookworm packages.

# What building the runner needs: debian/control's Build-Depends (the tests
# check that each of those is here).
BUILD_PACKAGES := g++ meson ninja-build pkg-config cmake \
            libdw-dev libelf-dev liblzma-dev libboost-dev nlohmann-json3-dev \
            libmsgpack-cxx-dev doctest-dev libiberty-dev \
            libcli11-dev libyaml-cpp-dev \
            libcurl4-openssl-dev libarchive-dev libzstd-dev libssl-dev libexpat1-dev
# What the tests need on top: the browser (tests/browser), clang (fuzz and
# the sanitizer build), perf and the ELF tools the end-to-end tests compare
# with, the style checks, and node/npm for s3rver and playwright when no
# node is installed.
TEST_PACKAGES := clang chromium python3-jsonschema cmark-gfm \
            linux-perf elfutils binutils clang-format clang-tidy util-linux procps \
            $(if $(and $(shell command -v node 2>/dev/null),$(shell command -v npm 2>/dev/null)),,nodejs npm)
# What `make deb` needs on top of BUILD_PACKAGES (lintian only when it
# checks the package: DEB_LINT=no skips it, as the CI install does).
DEB_LINT ?= yes
DEB_PACKAGES := debhelper dpkg-dev $(if $(filter yes,$(DEB_LINT)),lintian)

comma := ,
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
RUNNER := $(BUILD)/agent/runner
EXAMPLE := $(BUILD)/integrations/examples/bench_example
# What `make demo` runs, and what `make install` installs (the targets of
# meson.build with install : true).
DEMO_TARGETS := agent/runner integrations/examples/bench_example
INSTALL_TARGETS := agent/runner integrations/exec-harness/exec-harness \
            integrations/client/libinstrument_hooks.a

# Installs the Debian packages of $(1) that are missing, for $(2): as root
# directly, else through sudo. Without sudo (Debian's minimal images have
# none) it prints the command to run as root and fails. Nothing missing:
# nothing run, no sudo needed.
define install_missing
missing=""; for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
done; \
if [ -z "$$missing" ]; then echo "$(2): every Debian package needed is installed"; \
else \
  if [ "$$(id -u)" = 0 ]; then sudo=""; \
  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
  else \
    echo "$(2) needs these Debian packages, not installed:$$missing" >&2; \
    echo "Not root and no sudo: install them as root (su -), then run make again:" >&2; \
    echo "  apt-get update && apt-get install -y --no-install-recommends$$missing" >&2; \
    exit 1; \
  fi; \
  echo "$(2): installing$$missing"; \
  $$sudo apt-get update -qq && \
  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
fi
endef

.PHONY: demo test deps test-deps browser-deps setup build install format format-check \
        function-size clean fuzz man bench-compare bench-perf deb

deps:
	@$(call install_missing,$(BUILD_PACKAGES),build)

# One command for all that `make test` needs, build and tests alike.
test-deps:
	@$(call install_missing,$(BUILD_PACKAGES) $(TEST_PACKAGES),make test)

setup: deps
	@test -f $(BUILD)/build.ninja || \
	  meson setup $(BUILD) --wrap-mode=nodownload --prefix=$(PREFIX)

build: setup
	ninja -C $(BUILD)

# The browser test (tests/browser) drives Debian's chromium (in
# TEST_PACKAGES) through playwright-core from npm, pinned by its
# package-lock.json; the store tests run s3rver 3.7.1 from npm (tests/s3,
# pinned the same way), a compare case CodSpeed's tinybench plugin
# (tests/e2e/tinybench, pinned the same way), and a languages case its
# vitest plugin with vitest (tests/e2e/vitest, pinned the same way). node and npm come from Debian when either is missing
# (a NodeSource node brings its own npm, which Debian's npm package would
# conflict with); when `npm ci` fails, the test prints why it skips.
browser-deps: test-deps
	@if [ ! -d tests/browser/node_modules ] && command -v npm >/dev/null 2>&1; then \
	  (cd tests/browser && npm ci --no-audit --no-fund) || \
	  { rm -rf tests/browser/node_modules; echo "npm ci failed: the browser test will skip"; }; \
	fi; \
	if [ ! -d tests/s3/node_modules ] && command -v npm >/dev/null 2>&1; then \
	  (cd tests/s3 && npm ci --no-audit --no-fund) || \
	  { rm -rf tests/s3/node_modules; echo "npm ci failed: the store tests will skip"; }; \
	fi; \
	if [ ! -d tests/e2e/tinybench/node_modules ] && command -v npm >/dev/null 2>&1; then \
	  (cd tests/e2e/tinybench && npm ci --no-audit --no-fund) || \
	  { rm -rf tests/e2e/tinybench/node_modules; echo "npm ci failed: the tinybench case will skip"; }; \
	fi; \
	if [ ! -d tests/e2e/vitest/node_modules ] && command -v npm >/dev/null 2>&1; then \
	  (cd tests/e2e/vitest && npm ci --no-audit --no-fund) || \
	  { rm -rf tests/e2e/vitest/node_modules; echo "npm ci failed: the vitest case will skip"; }; \
	fi

# packaging/runner.1 is generated from the command-line declarations
# (agent/options.cpp); the agent and e2e tests fail until it is regenerated.
man: setup
	ninja -C $(BUILD) agent/runner
	$(RUNNER) --man > packaging/runner.1

# Every test binary prints "SKIP <case>: <why>" for a case this machine
# cannot run; the list is printed after the run, whatever its outcome.
# When a suite failed, its failed checks follow (tests/failed_checks.py),
# so that the last lines of a CI log name them.
test: browser-deps build
	@status=0; meson test -C $(BUILD) --print-errorlogs --num-processes 2 || status=$$?; \
	skips=$$(grep -h '^SKIP ' $(BUILD)/meson-logs/testlog.txt 2>/dev/null | sort -u); \
	if [ -n "$$skips" ]; then \
	  echo "$$(printf '%s\n' "$$skips" | wc -l) test case(s) skipped on this machine:"; \
	  printf '%s\n' "$$skips" | sed 's/^SKIP /  /'; \
	else echo "no test case skipped"; fi; \
	if [ $$status -ne 0 ]; then python3 tests/failed_checks.py $(BUILD)/meson-logs/testlog.txt; fi; \
	exit $$status

# libFuzzer targets (tests/fuzz/) under ASan+UBSan, built with clang in
# their own directory: each runs FUZZ_SECONDS on its seed corpus
# (tests/fuzz/corpus/<target>) plus what earlier runs found
# ($(FUZZ_BUILD)/corpus/<target>), FUZZ_JOBS targets at a time (one per
# CPU). Any crash, leak, timeout or out-of-memory fails; the input is kept
# in $(FUZZ_BUILD)/crashes/ (tests/fuzz/run_targets.sh).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= $(shell nproc)
FUZZ_TARGETS := frame_decoder codec exec_config symbols_map unwind_data \
                metadata timestamps perf_map jitdump pipedata report \
                compare_report compare_results compare_markers \
                store_documents unpack_archive \
                store_listing upload_answer store_record run_counters history
fuzz: test-deps
	@test -f $(FUZZ_BUILD)/build.ninja || CC=clang CXX=clang++ meson setup \
	  $(FUZZ_BUILD) --wrap-mode=nodownload -Dfuzz=true -Dtests=false \
	  -Db_sanitize=address,undefined -Db_lundef=false
	ninja -C $(FUZZ_BUILD) fuzz
	tests/fuzz/run_targets.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_TARGETS)

# runner compare's calibration on this machine (bench/compare/compare_bench.py):
# false alarms (A/A) and detections (A/B at 3, 5, 10% slowdown of
# compare_workload), 20 comparisons each, per condition (quiet, a CPU-bound
# neighbour, a memory-bandwidth neighbour compiled with cc), mode (runner
# exec with 20 rounds or its defaults, 3 runs per side pooled, --paired,
# interleaved) and metric (wall by default; --metrics wall,cpu), with the
# time each comparison took. Some hours on 2 cores in full; narrow it with
# BENCH_COMPARE_ARGS (--conditions, --modes, --metrics, --slowdowns,
# --pairs; --threshold PCT for runner compare).
# The tables are printed and written to $(BENCH_COMPARE_OUT)/compare_bench.json.
BENCH_COMPARE_OUT ?= $(BUILD)/bench-compare
BENCH_COMPARE_ARGS ?=
bench-compare: build
	/usr/bin/python3 bench/compare/compare_bench.py --runner $(RUNNER) \
	  --harness $(BUILD)/integrations/exec-harness/exec-harness \
	  --workload $(BUILD)/tests/e2e/compare_workload \
	  --out $(BENCH_COMPARE_OUT) $(BENCH_COMPARE_ARGS)

# The performance figures of docs/performance.md against their reference tools, in one run
# (bench/perf/perf_bench.py): report vs perf script and cat at 10k/100k/1M
# samples (the 1M profile needs about 9 GB in BENCH_PERF_DIR), lost samples
# vs perf record at 997-10000 Hz x dwarf 8-32 KiB, and the finalize and size
# benches. About 15 minutes on 2 cores.
BENCH_PERF_DIR ?= $(or $(TMPDIR),/tmp)
BENCH_PERF_ARGS ?=
bench-perf: build
	/usr/bin/python3 bench/perf/perf_bench.py --runner $(RUNNER) \
	  --harness $(BUILD)/integrations/exec-harness/exec-harness \
	  --workload $(BUILD)/bench/overhead/workload --workdir $(BENCH_PERF_DIR) \
	  $(BENCH_PERF_ARGS)

# The Debian package (debian/), built the Debian way from a clean copy of
# the sources in $(BUILD)/deb (`dpkg-buildpackage -us -uc -b` at the root
# works as well) and checked with lintian; the .deb files are copied to
# DEB_OUT. Installs only the build dependencies. The CI action installs the
# package (packaging/ci/runner-install).
DEB_OUT ?= $(BUILD)/deb
deb:
	@$(call install_missing,$(BUILD_PACKAGES) $(DEB_PACKAGES),make deb)
	rm -rf $(BUILD)/deb/src && mkdir -p $(BUILD)/deb/src
	tar --exclude-vcs --exclude='./build*' --exclude='node_modules' --exclude='./demo-profile' \
	  --exclude='./runner-profile.*' --exclude='./obj-*' --exclude='./debian/.debhelper' \
	  --exclude='./debian/runner' --exclude='./debian/tmp' --exclude='./debian/files' \
	  --exclude='./debian/*.substvars' --exclude='./debian/debhelper-build-stamp' \
	  -cf - . | tar -C $(BUILD)/deb/src -xf -
	cd $(BUILD)/deb/src && dpkg-buildpackage -us -uc -b
	$(if $(filter yes,$(DEB_LINT)),lintian --fail-on error$(comma)warning $(BUILD)/deb/*.changes)
	@mkdir -p $(DEB_OUT) && cp $(BUILD)/deb/*.deb $(DEB_OUT)/ 2>/dev/null || true
	@ls -l $(DEB_OUT)/*.deb

# Builds only what the demo runs: the runner and the example benchmark.
demo: setup
	ninja -C $(BUILD) $(DEMO_TARGETS)
	@rm -rf demo-profile
	$(RUNNER) run --profile-folder demo-profile --report -- $(EXAMPLE)
	@echo
	@echo "Profile folder: $(CURDIR)/demo-profile"
	@echo "Flamegraphs:    $(CURDIR)/demo-profile/report/*.svg (open in a browser)"

# meson install of what a user needs: runner, exec-harness, their man pages,
# the client library (libinstrument_hooks.a, its headers under
# include/runner/ and its pkg-config file runner-instrument-hooks.pc), into
# PREFIX (default /usr/local), under DESTDIR when set. Builds only those.
install: setup
	@prefix=$$(meson introspect $(BUILD) --buildoptions | \
	  python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])'); \
	if [ "$$prefix" != "$(PREFIX)" ]; then meson configure $(BUILD) -Dprefix=$(PREFIX); fi
	ninja -C $(BUILD) $(INSTALL_TARGETS)
	meson install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir $(abspath $(DESTDIR)))

format:
	git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | xargs clang-format --dry-run --Werror

# No function over 80 lines (comments and blank lines included) in any
# part, C sources included: clang-tidy's readability-function-size on the
# build's compile_commands.json, one clang-tidy per CPU.
SIZE_CHECKED := base fifo profiler symbols format perfdata report compare \
                history upload finalize agent integrations
function-size: build test-deps
	@files=$$(git ls-files $(addsuffix /*.cpp,$(SIZE_CHECKED)) \
	                       $(addsuffix /*.c,$(SIZE_CHECKED))); \
	out=$$(printf '%s\n' $$files | xargs -P "$$(nproc)" -n 8 \
	  clang-tidy -quiet -p $(BUILD) -checks='-*,readability-function-size' \
	  -config='{CheckOptions: [{key: readability-function-size.LineThreshold, value: 80}]}' \
	  2>/dev/null | grep -A1 'readability-function-size' | grep -v '^--$$' || true); \
	if [ -n "$$out" ]; then printf '%s\n' "$$out"; echo "function-size: functions over 80 lines"; exit 1; fi; \
	echo "function-size: no function over 80 lines in $(SIZE_CHECKED)"

clean:
	rm -rf $(BUILD) build-asan $(FUZZ_BUILD)
