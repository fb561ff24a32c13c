# Cairn. `make install` builds the binaries into bin/ and installs the plugin into Claude Code
# (when the claude CLI is on PATH); `make test` runs every check CI runs.
GO ?= go
BIN := bin
BINARIES := $(BIN)/cairn-mcp $(BIN)/cairn-session-start $(BIN)/cairn-stop $(BIN)/cairn-event $(BIN)/cairn

.PHONY: build install test check format lint fullsize unit e2e fuzz bench clean dist checksums dist-check

# Each binary is linked into bin/.link and copied into place: the linker writes through mmap, and
# an executable whose cached pages were written that way starts slower (the Stop hook about 0.1x
# the no-op floor, BenchmarkHooksAsClaudeCodeRunsThem) for as long as they stay cached.
# bin/.checksums marks the binaries as built from these sources: hooks/launch runs bin/ only
# while it equals release/checksums.txt, so a checkout changed by git pull without make build
# falls back to binaries of its own (see hooks/install). bin/.self-check says the hooks compare
# the stamp themselves (faster than the shell; see hooks/launch). A directory at a binary's name
# (or a link to one) is bin/'s and goes, as make clean's: mv would move the binary into it. The
# stamp is renamed into place too: cp would write into a FIFO there, waiting for a reader.
build:
	$(GO) build -trimpath -buildvcs=auto -o $(BIN)/.link/cairn-mcp ./mcpserver
	$(GO) build -trimpath -buildvcs=auto -o $(BIN)/.link/cairn-session-start ./hooks/sessionstart
	$(GO) build -trimpath -buildvcs=auto -o $(BIN)/.link/cairn-stop ./hooks/stop
	$(GO) build -trimpath -buildvcs=auto -o $(BIN)/.link/cairn-event ./hooks/event
	$(GO) build -trimpath -buildvcs=auto -o $(BIN)/.link/cairn ./cmd/cairn
	for b in cairn-mcp cairn-session-start cairn-stop cairn-event cairn; do \
		rm -f $(BIN)/$$b.new && cp $(BIN)/.link/$$b $(BIN)/$$b.new && { [ ! -d $(BIN)/$$b ] || rm -rf $(BIN)/$$b; } && \
			mv -f $(BIN)/$$b.new $(BIN)/$$b || exit 1; \
	done
	rm -rf $(BIN)/.link
	rm -f $(BIN)/.checksums.new && cp release/checksums.txt $(BIN)/.checksums.new && mv -f $(BIN)/.checksums.new $(BIN)/.checksums
	touch $(BIN)/.self-check

# Builds, registers this checkout as a marketplace and installs the plugin from it, then checks
# the install. Without the claude CLI it stops after the build and says how to load the plugin.
install: build
	@if command -v claude >/dev/null 2>&1; then \
		claude plugin marketplace add "$(CURDIR)" && claude plugin install cairn@cairn; \
	else \
		echo "claude is not on PATH: run Claude Code with --plugin-dir $(CURDIR) to use Cairn"; \
	fi
	@echo "cairn is $(CURDIR)/$(BIN)/cairn; the agent finds it on its PATH (Claude Code adds the plugin's bin/)."
	@echo "To type cairn in your shell: $(BIN)/cairn doctor --link (a link in ~/.local/bin), or add $(CURDIR)/$(BIN) to PATH."
	$(BIN)/cairn doctor

# The binaries need no cgo, and the release is built without it. cairn links spf13/pflag (for
# cobra's shell completion), which imports net; with cgo on, that makes a dynamically linked
# binary whose start costs about twice the CPU (cairn status: 1.1 ms -> 2.3 ms). Only the
# build: go test -race needs cgo.
build: export CGO_ENABLED ?= 0

# What builds is this module alone, as the launcher's build and the release (internal/release)
# do: a go.work above the checkout, or GOWORK in the environment, would swap other modules in
# (or fail on a workspace that does not list this one).
build dist checksums dist-check: export GOWORK := off

check: format lint
format:
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
	$(GO) mod tidy -diff
lint:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	$(GO) tool staticcheck ./...

# go test's own 10-minute limit a package is for a hang; on a busy two-core machine the cli and
# real-client packages alone take close to that, so the limit is raised (every test that waits
# has its own deadline).
TESTFLAGS ?= -race -count=1 -timeout 30m
# Under -race the secrets package runs a tenth of the corpora it generates at random (the
# detector finds nothing in loops that start no goroutine, and slows each case ten to fifty
# times); they run at full size here, without it.
FULLSIZE = $(GO) test -count=1 ./internal/secrets/
fullsize:
	$(FULLSIZE)
unit:
	$(GO) test $(TESTFLAGS) ./...
	$(FULLSIZE)

# The end-to-end suite runs inside `go test ./...` (internal/e2e); this installs the pinned
# Claude Code CLI it drives into a cache first.
e2e:
	CAIRN_CLAUDE_BIN="$$(bash .ci/install-claude.sh | tail -n 1)" $(GO) test -count=1 -timeout 30m ./internal/e2e/...

# gofmt and tidy first (seconds). The test run leaves a core idle for part of its time (its
# last, slowest package alone; tests waiting on processes or the disk), so lint, the full-size
# secrets run and the release (the committed checksums must be what these sources build to)
# run beside it at the lowest priority: they take what the tests leave and slow them little.
# Their output follows the tests'; a failure of either part fails make test.
test: SHELL := bash
test: format
	@side=$$(mktemp) || exit 1; trap 'rm -f "$$side"' EXIT; \
	nice -n 19 $(MAKE) --no-print-directory -k lint fullsize dist-check >"$$side" 2>&1 & side_pid=$$!; \
	echo "make lint fullsize dist-check: beside the tests, their output after them"; \
	echo 'CAIRN_CLAUDE_BIN="$$(bash .ci/install-claude.sh | tail -n 1)" $(GO) test $(TESTFLAGS) ./...'; \
	CAIRN_CLAUDE_BIN="$$(bash .ci/install-claude.sh | tail -n 1)" $(GO) test $(TESTFLAGS) ./...; tests=$$?; \
	wait $$side_pid; rest=$$?; \
	echo "make lint fullsize dist-check (run beside the tests):"; cat "$$side"; \
	[ $$tests = 0 ] || echo "make test: go test failed (exit $$tests)"; \
	[ $$rest = 0 ] || echo "make test: make lint fullsize dist-check failed (exit $$rest)"; \
	[ $$tests = 0 ] && [ $$rest = 0 ]

# A short coverage-guided run of every fuzz target (their seed corpora already run in `unit`).
fuzz:
	bash .ci/fuzz-smoke

# Go benchmarks and whole-process timings of the hooks (against a no-op Go binary and the
# seeds' bash+jq baseline in ../shared/baseline), COUNT runs each; benchstat prints medians.
# The packages run one after another in this order, the hooks first: ext4 without a journal
# (this project's development machines) passes over inodes freed in the last minutes when it
# creates a file, so after the store's benchmarks create and remove tens of thousands of files,
# the file SessionStart creates for its session record costs up to 1 ms more for a while.
# BENCH picks the benchmarks by go test's -bench pattern (internal/readme runs a few, once).
COUNT ?= 6
BENCHTIME ?= 1s
BENCH ?= .
# The benchmarks' output goes through tee: bash with pipefail, so that a benchmark that fails
# (or go test's timeout) fails make bench rather than leaving tee's 0 (sh is dash on Debian,
# which has no pipefail).
bench: SHELL := bash
bench: .SHELLFLAGS := -o pipefail -c
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(COUNT) \
		./internal/plugintest ./internal/store ./internal/mcptools ./internal/workflow ./internal/strictjson ./internal/secrets ./internal/report ./internal/memory \
		./internal/remote/gitremote | tee bench.out
	$(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da bench.out

# The release (internal/release): every binary for every platform, one archive each and the
# checksums file, into dist/, exactly as published. Reproducible with the Go pinned here, so
# release/checksums.txt is committed: `make checksums` rewrites it after a change to the
# sources, CI's `make dist-check` fails when a build does not reproduce it.
DIST_GO ?= go1.26.8
dist:
	GOTOOLCHAIN=$(DIST_GO) $(GO) run ./internal/release/dist -out dist
checksums:
	GOTOOLCHAIN=$(DIST_GO) $(GO) run ./internal/release/dist -out dist -write
dist-check:
	GOTOOLCHAIN=$(DIST_GO) $(GO) run ./internal/release/dist -out dist -check

clean:
	rm -rf $(BIN) dist
