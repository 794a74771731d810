# The two commands of the README:
#   make demo   install what is missing, build, profile the example benchmark
#   make test   install what is missing, build, run every test
# Everything comes from Debian bookworm packages.

PACKAGES := g++ clang meson ninja-build pkg-config cmake \
            libdw-dev libelf-dev libboost-dev nlohmann-json3-dev \
            libmsgpack-cxx-dev doctest-dev libiberty-dev \
            linux-perf elfutils binutils clang-format util-linux procps

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
BUILD ?= build
RUNNER := $(BUILD)/agent/runner
EXAMPLE := $(BUILD)/integrations/examples/bench_example

.PHONY: demo test deps build format format-check clean

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

# Every test binary prints "SKIP <case>: <why>" for a case this machine
# cannot run; the list is printed after the run, whatever its outcome.
test: build
	@status=0; meson test -C $(BUILD) --print-errorlogs --num-processes 2 || status=$$?; \
	skips=$$(grep -h '^SKIP ' $(BUILD)/meson-logs/testlog.txt 2>/dev/null | sort -u); \
	if [ -n "$$skips" ]; then \
	  echo "$$(printf '%s\n' "$$skips" | wc -l) test case(s) skipped on this machine:"; \
	  printf '%s\n' "$$skips" | sed 's/^SKIP /  /'; \
	else echo "no test case skipped"; fi; \
	exit $$status

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

clean:
	rm -rf $(BUILD) build-asan
