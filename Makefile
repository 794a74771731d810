# The two commands of the README:
#   make demo   install what is missing, build, profile the example benchmark
#   make test   install what is missing, build, run every test
# Everything comes from Debian bookworm packages.

PACKAGES := g++ clang meson ninja-build pkg-config cmake \
            libdw-dev libelf-dev liblzma-dev libboost-dev nlohmann-json3-dev \
            libmsgpack-cxx-dev doctest-dev libiberty-dev \
            libcli11-dev libyaml-cpp-dev chromium python3-jsonschema cmark-gfm \
            libcurl4-openssl-dev libarchive-dev libzstd-dev libssl-dev libexpat1-dev \
            linux-perf elfutils binutils clang-format clang-tidy util-linux procps

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
BUILD ?= build
RUNNER := $(BUILD)/agent/runner
EXAMPLE := $(BUILD)/integrations/examples/bench_example

.PHONY: demo test deps browser-deps build format format-check function-size clean fuzz man \
        bench-compare bench-perf deb

deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all packages present"; fi

build: deps
	@test -f $(BUILD)/build.ninja || meson setup $(BUILD) --wrap-mode=nodownload
	ninja -C $(BUILD)

# The browser test (tests/browser) drives Debian's chromium (in PACKAGES)
# through playwright-core from npm, pinned by its package-lock.json; the
# store tests run s3rver 3.7.1 from npm (tests/s3, pinned the same way). node and
# npm are installed from Debian when either is missing (a NodeSource node
# brings its own npm, which Debian's npm package would conflict with); when
# they or `npm ci` are unavailable, the test prints why it skips.
browser-deps: deps
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "installing: nodejs npm"; \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    $(SUDO) apt-get install -y -qq --no-install-recommends nodejs npm; } || \
	  echo "cannot install nodejs and npm: the browser test will skip"; \
	fi; \
	if [ ! -d tests/browser/node_modules ] && command -v npm >/dev/null 2>&1; then \
	  (cd tests/browser && npm ci --no-audit --no-fund) || \
	  { rm -rf tests/browser/node_modules; echo "npm ci failed: the browser test will skip"; }; \
	fi; \
	if [ ! -d tests/s3/node_modules ] && command -v npm >/dev/null 2>&1; then \
	  (cd tests/s3 && npm ci --no-audit --no-fund) || \
	  { rm -rf tests/s3/node_modules; echo "npm ci failed: the store tests will skip"; }; \
	fi

# packaging/runner.1 is generated from the command-line declarations
# (agent/options.cpp); the agent and e2e tests fail until it is regenerated.
man: build
	$(RUNNER) --man > packaging/runner.1

# Every test binary prints "SKIP <case>: <why>" for a case this machine
# cannot run; the list is printed after the run, whatever its outcome.
test: build browser-deps
	@status=0; meson test -C $(BUILD) --print-errorlogs --num-processes 2 || status=$$?; \
	skips=$$(grep -h '^SKIP ' $(BUILD)/meson-logs/testlog.txt 2>/dev/null | sort -u); \
	if [ -n "$$skips" ]; then \
	  echo "$$(printf '%s\n' "$$skips" | wc -l) test case(s) skipped on this machine:"; \
	  printf '%s\n' "$$skips" | sed 's/^SKIP /  /'; \
	else echo "no test case skipped"; fi; \
	exit $$status

# libFuzzer targets (tests/fuzz/) under ASan+UBSan, built with clang in
# their own directory: each runs FUZZ_SECONDS on its seed corpus
# (tests/fuzz/corpus/<target>) plus what earlier runs found
# ($(FUZZ_BUILD)/corpus/<target>). Any crash, leak, timeout or
# out-of-memory fails; the input is kept in $(FUZZ_BUILD)/crashes/.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := frame_decoder codec exec_config symbols_map unwind_data \
                metadata timestamps perf_map jitdump pipedata report \
                compare_report compare_results compare_markers \
                store_documents unpack_archive \
                store_listing upload_answer store_record
fuzz: deps
	@test -f $(FUZZ_BUILD)/build.ninja || CC=clang CXX=clang++ meson setup \
	  $(FUZZ_BUILD) --wrap-mode=nodownload -Dfuzz=true -Dtests=false \
	  -Db_sanitize=address,undefined -Db_lundef=false
	ninja -C $(FUZZ_BUILD) fuzz
	@failed=""; mkdir -p $(FUZZ_BUILD)/crashes; \
	for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  dict=; test -f tests/fuzz/$$t.dict && dict=-dict=tests/fuzz/$$t.dict; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(FUZZ_BUILD)/tests/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $$dict \
	    -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t- \
	    $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
	    > $(FUZZ_BUILD)/fuzz_$$t.log 2>&1 \
	  || { failed="$$failed $$t"; tail -n 40 $(FUZZ_BUILD)/fuzz_$$t.log; }; \
	  grep -h '^stat::number_of_executed_units' $(FUZZ_BUILD)/fuzz_$$t.log; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (inputs in $(FUZZ_BUILD)/crashes/)"; exit 1; fi; \
	echo "fuzz: every target ran $(FUZZ_SECONDS) s clean"

# runner compare's false-alarm and detection rates on this machine
# (bench/compare/compare_bench.py): 20 A/A pairs and 20 A/B pairs at 5% and
# at 10% slowdown of compare_workload, each pair two fresh `runner exec`
# runs; runner compare's verdicts next to compare.py's U test (scipy) and a
# plain 5% threshold on the same data. About 10 minutes on 2 cores; the
# table is printed and written to $(BENCH_COMPARE_OUT)/compare_bench.json.
BENCH_COMPARE_OUT ?= $(BUILD)/bench-compare
BENCH_COMPARE_ARGS ?=
bench-compare: build
	@dpkg-query -W -f='$${Status}' python3-scipy 2>/dev/null | grep -q 'install ok installed' || { \
	  echo "installing: python3-scipy"; $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends python3-scipy; }
	/usr/bin/python3 bench/compare/compare_bench.py --runner $(RUNNER) \
	  --harness $(BUILD)/integrations/exec-harness/exec-harness \
	  --workload $(BUILD)/tests/e2e/compare_workload \
	  --out $(BENCH_COMPARE_OUT) $(BENCH_COMPARE_ARGS)

# Issue 18's performance figures against their reference tools, in one run
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

# The Debian package, built from a copy of the sources (packaging/debian as
# debian/) in $(BUILD)/deb, checked with lintian; the .deb files are copied
# to DEB_OUT. The CI action installs it (packaging/ci/runner-install).
DEB_OUT ?= $(BUILD)/deb
deb: deps
	@missing=""; for p in debhelper dpkg-dev lintian; do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; fi
	rm -rf $(BUILD)/deb/src && mkdir -p $(BUILD)/deb/src
	tar --exclude-vcs --exclude='./build*' --exclude='node_modules' --exclude='./demo-profile' \
	  --exclude='./runner-profile.*' --exclude='./debian' -cf - . | tar -C $(BUILD)/deb/src -xf -
	cp -r packaging/debian $(BUILD)/deb/src/debian
	cd $(BUILD)/deb/src && dpkg-buildpackage -us -uc -b
	lintian --fail-on error $(BUILD)/deb/*.changes
	@mkdir -p $(DEB_OUT) && cp $(BUILD)/deb/*.deb $(DEB_OUT)/ 2>/dev/null || true
	@ls -l $(DEB_OUT)/*.deb

demo: build
	@rm -rf demo-profile
	$(RUNNER) run --profile-folder demo-profile --report -- $(EXAMPLE)
	@echo
	@echo "Profile folder: $(CURDIR)/demo-profile"
	@echo "Flamegraphs:    $(CURDIR)/demo-profile/report/*.svg (open in a browser)"

format:
	git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' '*.c' '*.h' | xargs clang-format --dry-run --Werror

# No function over 80 lines (comments and blank lines included) in any
# part, C sources included: clang-tidy's readability-function-size on the
# build's compile_commands.json.
SIZE_CHECKED := base fifo profiler symbols format perfdata report compare \
                upload agent integrations
function-size: build
	@files=$$(git ls-files $(addsuffix /*.cpp,$(SIZE_CHECKED)) \
	                       $(addsuffix /*.c,$(SIZE_CHECKED))); \
	out=$$(clang-tidy -quiet -p $(BUILD) -checks='-*,readability-function-size' \
	  -config='{CheckOptions: [{key: readability-function-size.LineThreshold, value: 80}]}' \
	  $$files 2>/dev/null | grep -A1 'readability-function-size' | grep -v '^--$$' || true); \
	if [ -n "$$out" ]; then printf '%s\n' "$$out"; echo "function-size: functions over 80 lines"; exit 1; fi; \
	echo "function-size: no function over 80 lines in $(SIZE_CHECKED)"

clean:
	rm -rf $(BUILD) build-asan $(FUZZ_BUILD)
