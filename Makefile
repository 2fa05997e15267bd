# atlas-reproduce: build, test, demo. Every target works offline once the Go
# module cache is filled from the module proxy.
GO            ?= go
BIN           := bin/atlas-reproduce
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME      ?= 30s
DEMO_DIR      ?= demo
BENCH_DIR     ?= bench-data
PKGS          := ./...

.PHONY: all build test lint vet staticcheck fmt-check standalone fuzz demo demo-diff bench bench-packages bench-history clean

all: build

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/atlas-reproduce

RACE_PKGS     := ./pipeline/... ./internal/freelist/... ./aggregate/... ./internal/outset/... ./serve/... ./crawl/... ./synth/... ./fetch/... ./internal/sandbox/... ./internal/ociroot/... ./internal/httpserve/... ./proxy/... ./publish/... ./internal/termtext/...

## test: formatting, vet, staticcheck, the whole suite, then the race detector
## over the concurrent packages. scripts/testsummary prints the packages'
## results, failed tests' output, and at the end every skipped test and why,
## then every failed test. Each step runs even when an earlier one failed,
## so one run reports every failure; the last line names the failed steps,
## and the exit status is non-zero if any failed.
test:
	@failed=""; \
	for step in fmt-check vet staticcheck standalone; do \
		$(MAKE) --no-print-directory $$step || failed="$$failed $$step"; \
	done; \
	$(GO) test -count=1 -json -timeout 20m $(PKGS) | $(GO) run ./scripts/testsummary || failed="$$failed suite"; \
	echo "purego: the hand-written low-level code without assembly or unsafe"; \
	$(GO) test -count=1 -tags purego ./internal/gunzip ./internal/sha256x8 ./internal/toolid || failed="$$failed purego"; \
	echo "race detector: $(RACE_PKGS)"; \
	$(GO) test -count=1 -race -timeout 20m $(RACE_PKGS) || failed="$$failed race"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed"; exit 1; fi; \
	echo "make test: every step passed"

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## standalone: a user's clone has nothing beside it, so no tracked file may
## reach outside the repository for its data.
standalone:
	@out=$$(git grep -n -e '\.\./shar[e]d' -- ':!*.md' 2>/dev/null); \
	if [ -n "$$out" ]; then echo "tracked files reach for the team's shared folder beside the repository, which a clone does not have:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

staticcheck:
	$(GO) run $(STATICCHECK) $(PKGS)

lint: fmt-check vet staticcheck standalone

## fuzz: every fuzz target of the module for FUZZTIME each (go test
## allows one target per run). The targets are listed by `go test -list`
## in each package whose tests define one, so a new target runs without
## an edit here.
fuzz:
	@set -e; for dir in $$(grep -rl --include='*_test.go' --exclude-dir=node_modules '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for target in $$($(GO) test -list '^Fuzz' $$dir | grep '^Fuzz'); do \
			echo "fuzz: $$dir $$target"; \
			$(GO) test $$dir -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
		done; \
	done

## demo: a synthetic census at full scale, the whole pipeline, the report,
## which holds the counts to the census's own truth.json; its verdict line
## is repeated last.
demo: build
	$(BIN) synth --out $(DEMO_DIR)/data
	$(BIN) run --data $(DEMO_DIR)/data --sha256sums $(DEMO_DIR)/data/SHA256SUMS --out $(DEMO_DIR)/out
	cat $(DEMO_DIR)/out/report.md
	@echo; grep -m1 '^Verdict' $(DEMO_DIR)/out/report.md

## demo-diff: a small synthetic census, a next release of it with seeded
## edits (listed in edits.json), both run (the second beside the first,
## --baseline), diff between the two runs, and both added to a dataset
## (history: demo/diff/dataset/history.html).
demo-diff: build
	$(BIN) synth --tools 20000 --out $(DEMO_DIR)/diff/release-1
	$(BIN) synth --next-of $(DEMO_DIR)/diff/release-1 --out $(DEMO_DIR)/diff/release-2 --edits 20 --seed 1
	$(BIN) run --data $(DEMO_DIR)/diff/release-1 --sha256sums $(DEMO_DIR)/diff/release-1/SHA256SUMS --out $(DEMO_DIR)/diff/run-1 --release-date 2026-11-01
	$(BIN) run --data $(DEMO_DIR)/diff/release-2 --sha256sums $(DEMO_DIR)/diff/release-2/SHA256SUMS --out $(DEMO_DIR)/diff/run-2 --release-date 2026-12-01 --baseline $(DEMO_DIR)/diff/run-1
	$(BIN) diff $(DEMO_DIR)/diff/run-1 $(DEMO_DIR)/diff/run-2
	$(BIN) history --out $(DEMO_DIR)/diff/dataset $(DEMO_DIR)/diff/run-1 $(DEMO_DIR)/diff/run-2

## bench: a few minutes. `run` paired with `gzip -dc` of the same file in
## every run (medians of 5) on the real-schema census (the bundled real
## tools resampled to the snapshot's size: definitions served many times)
## on the dense census (every definition distinct), on the near-miss census
## (the held-back census's shape: small schemas, a near-miss vocabulary,
## 8.4:1 in gzip), then the 1×
## synthetic census and its heavy-tailed twin with the Python reference.
## Each prints its headline table first: wall and CPU ratios to `gzip -dc`,
## the load average during the loop and the CPU model.
## BENCH.md says what each figure means; `$(BIN) bench` alone also times
## 4× and 10×.
bench: build
	mkdir -p $(BENCH_DIR)
	python3 bench/realcensus.py $(BENCH_DIR)/real
	$(BIN) synth --out $(BENCH_DIR)/dense --dense --progress=false
	$(BIN) synth --out $(BENCH_DIR)/nearmiss --near-miss --servers 13502 --progress=false
	$(BIN) synth --out $(BENCH_DIR)/default --progress=false
	python3 bench/sharedschemas.py $(BENCH_DIR)/default $(BENCH_DIR)/shared
	$(BIN) bench --data $(BENCH_DIR)/real --data $(BENCH_DIR)/dense --data $(BENCH_DIR)/nearmiss --data $(BENCH_DIR)/default --data $(BENCH_DIR)/shared --runs 7 --python-scales ''
	$(BIN) bench --scales 1 --runs 3

## bench-packages: about 45 minutes, with the npm registry. The real servers of
## bench/packages.txt crawled cold then warm as a normal user (root runs it as
## BENCH_USER, atlas-ci by default), each beside the TypeScript SDK client's
## direct run (docs/bench-packages.md).
bench-packages: build
	bench/packages.sh $(BIN) $(BENCH_DIR)/packages bench/packages.txt

## bench-history: `history` over 24 synthetic releases of 229,539 tools (BENCH.md, "history").
bench-history: build
	bench/history.sh $(BENCH_DIR)/history

clean:
	rm -rf bin $(DEMO_DIR) $(BENCH_DIR)
