# cairn — run `make help` for the targets.
#
# Everything the tests need is built here from pinned module versions and
# cached under .cache/ (git-ignored), so a fresh clone needs only Go.

SHELL := /bin/bash
GO ?= go
CACHE := $(CURDIR)/.cache
BIN := $(CACHE)/bin
# Where `make install` puts cairn: $(PREFIX)/bin if PREFIX is given, else
# the caller's $GOBIN, else $(go env GOPATH)/bin, as `go install` would.
INSTALL_GOBIN := $(GOBIN)
export GOBIN := $(BIN)
# The version cairn reports (cairn version, MCP, Parquet created_by).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/cairnlog/cairn/internal/version.override=$(VERSION)
# cairn is built without cgo: a static binary that runs on any Linux of its
# architecture (a container with no libc, an ephemeral worker's image) and
# starts about 1 ms sooner, with no dynamic loader or libc to set up. Only
# net's resolver and os/user would use cgo; their pure-Go versions serve.
BUILD_CGO := CGO_ENABLED=0

STATICCHECK_VERSION := v0.8.2
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
VERSITYGW_VERSION := v1.8.0
# Debian's restic, a peer in the benchmark (check: apt-cache policy restic).
RESTIC_VERSION := 0.14.0-1+b5
RESTIC := $(CACHE)/restic/usr/bin/restic

HYPARQUET_VERSION := 1.31.5
# More independent Parquet readers for the export tests: DuckDB (Debian
# has no package; check: apt-cache policy duckdb) and parquetjs (1.8.7 is
# the newest that runs on Debian's node 20).
DUCKDB_NODE_VERSION := 1.5.6-r.1
PARQUETJS_VERSION := 1.8.7
NODE_DIR := $(CACHE)/node
# node-gyp builds native modules (better-sqlite3) against the headers of
# the machine's Node.js, never a download (only the registries are reachable).
ifneq ($(wildcard /usr/include/node/common.gypi),)
export npm_config_nodedir := /usr
endif

# Framework adapters: nested modules, so the main module does not depend on the frameworks.
ADAPTERS := adapters/eino adapters/adk

# The platforms every package and command must build on, tests included
# (`make cross`; `make test` runs it first).
CROSS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: help build install cross test test-clients clients-deps test-adapters test-short bench bench-langgraph bench-go bench-quick bench-export soak lint fuzz demo minio versitygw restic servers python hyparquet parquet-readers clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | sort

build: ## build the cairn binary into .cache/bin
	$(BUILD_CGO) $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/cairn ./cmd/cairn

install: ## put cairn on PATH: into $(PREFIX)/bin if PREFIX is set, else $GOBIN, else $(go env GOPATH)/bin
	@dir='$(if $(PREFIX),$(PREFIX)/bin,$(INSTALL_GOBIN))'; \
	if [ -z "$$dir" ]; then dir="$$($(GO) env GOPATH | cut -d: -f1)/bin"; fi; \
	mkdir -p "$$dir" && $(BUILD_CGO) $(GO) build -ldflags '$(LDFLAGS)' -o "$$dir/cairn" ./cmd/cairn && \
	echo "installed $$dir/cairn ($$("$$dir/cairn" version))" && \
	case ":$$PATH:" in *":$$dir:"*) ;; *) echo "note: $$dir is not on PATH; add it, e.g. export PATH=\"$$dir:\$$PATH\"";; esac

# go vet type-checks and compiles each package with its test files for
# the GOOS/GOARCH it is given, so one vet per platform is the cheapest
# check that `go install` and `go test` still compile there.
cross: ## go vet ./... for each GOOS/GOARCH in CROSS (Linux, macOS, Windows; amd64, arm64), the adapters' modules too
	@set -e; for p in $(CROSS); do \
	  for m in . $(ADAPTERS); do \
	    echo "== $$m: GOOS=$${p%/*} GOARCH=$${p#*/} go vet ./..."; \
	    (cd $$m && GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet ./...); \
	  done; \
	done

test: cross build servers python parquet-readers test-clients ## the whole suite (README's test command): unit, conformance on every store and server, crash, fuzz smoke
	$(GO) vet ./...
	CAIRN_BIN=$(BIN)/cairn CAIRN_MINIO=$(BIN)/minio CAIRN_VERSITYGW=$(BIN)/versitygw $(GO) test -count=1 -timeout 40m ./...
	@set -e; for m in $(ADAPTERS); do \
	  echo "== $$m"; \
	  (cd $$m && $(GO) vet ./... && \
	   CAIRN_BIN=$(BIN)/cairn CAIRN_MINIO=$(BIN)/minio CAIRN_VERSITYGW=$(BIN)/versitygw $(GO) test -count=1 -timeout 20m ./...); \
	done
	$(MAKE) --no-print-directory fuzz FUZZTIME=3s
	$(MAKE) --no-print-directory bench-quick

test-adapters: minio ## only the framework adapters' modules (Eino, ADK), incl. ADK's own session test suite on MinIO
	@set -e; for m in $(ADAPTERS); do \
	  echo "== $$m"; \
	  (cd $$m && $(GO) vet ./... && CAIRN_MINIO=$(BIN)/minio $(GO) test -count=1 -timeout 20m ./...); \
	done

test-short: ## unit tests only, no servers
	$(GO) test -short ./...

bench: build bench-go minio restic clients-deps ## the full benchmark (docs/bench.md): microbenchmarks, cairn-bench against limits and peers, the LangGraph.js checkpointer against SQLite's (about 20 min on the 2-core VM)
	$(GO) build -o $(BIN)/cairn-bench ./cmd/cairn-bench
	$(BUILD_CGO) $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/cairn-startfloor ./internal/bench/startfloor
	CAIRN_MINIO=$(BIN)/minio $(BIN)/cairn-bench -out bench-results -restic $(RESTIC) -cairn $(BIN)/cairn -start-floor $(BIN)/cairn-startfloor
	$(MAKE) --no-print-directory bench-langgraph

# LANGGRAPH_BENCH STEPS ROUNDS: the LangGraph.js side-by-side run (clients/langgraph/test/bench.mjs).
LANGGRAPH_BENCH = cd clients/langgraph && npm run --silent build && cd ../.. && CAIRN_BIN=$(BIN)/cairn node clients/langgraph/test/bench.mjs

bench-langgraph: build clients-deps ## LangGraph.js with cairn's checkpointer and with SQLite's, side by side: stored ÷ appended and ms a step, 300 steps (bench-results/langgraph.md)
	mkdir -p bench-results
	$(LANGGRAPH_BENCH) 300 3 > bench-results/langgraph.md
	cat bench-results/langgraph.md

bench-go: ## Go microbenchmarks: chunker, hashing, compression, packing, manifests, JSON trees
	$(GO) test -run '^$$' -bench . -benchmem ./...

bench-quick: build minio restic clients-deps ## a reduced cairn-bench run (< 2 min) that checks the harness works; no timing is judged
	$(GO) build -o $(BIN)/cairn-bench ./cmd/cairn-bench
	$(BUILD_CGO) $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/cairn-startfloor ./internal/bench/startfloor
	CAIRN_MINIO=$(BIN)/minio $(BIN)/cairn-bench -quick -out bench-results/quick -restic $(RESTIC) -cairn $(BIN)/cairn -start-floor $(BIN)/cairn-startfloor
	$(LANGGRAPH_BENCH) 20 1 > bench-results/quick/langgraph.md

FUZZTIME ?= 10s
# Each fuzz target is found by its `func FuzzX` line (no test binary is
# built to list them) and run for FUZZTIME; the last line of each run,
# with its executions, is printed. `make test` runs this with 3s each.
#
# Go 1.26's fuzz coordinator can fail a target that found nothing when
# its -fuzztime deadline fires (go.dev/issue/75804, fixed in Go 1.27):
# the output, less its progress lines, is only "--- FAIL: FuzzX (…)",
# "    context deadline exceeded", "FAIL", "exit status 1" and
# "FAIL <pkg> <time>", and no input is written to testdata/fuzz/FuzzX.
# Exactly that counts as a pass, said so on its line; any other failure
# (a crasher is always written to testdata/fuzz first) prints the output
# and stops. Drop this once the go directive is 1.27 or later.
fuzz: ## run every fuzz target for FUZZTIME each (corpora in each package's testdata/fuzz)
	@set -eo pipefail; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v '^./.cache/' | sort); do \
	  dir=$$(dirname $${f#./}); mod=.; \
	  for m in $(ADAPTERS); do case $$dir in $$m|$$m/*) mod=$$m;; esac; done; \
	  rel=$${dir#$$mod}; [ "$$mod" = . ] && rel=/$$dir; pkg=.$$rel; \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    printf '%-22s %-20s ' "$$dir" "$$t"; \
	    corpus=$$dir/testdata/fuzz/$$t; before=$$(ls -A $$corpus 2>/dev/null || true); \
	    if out=$$(cd $$mod && $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); then \
	      echo "$$out" | grep -E '^fuzz: elapsed' | tail -1; continue; \
	    fi; \
	    after=$$(ls -A $$corpus 2>/dev/null || true); \
	    got=$$(echo "$$out" | { grep -vE '^(fuzz: elapsed: |warning: )' || true; } | \
	      sed -E 's/^(--- FAIL: [A-Za-z0-9_]+) \([0-9.]+s\)$$/\1 (T)/; s/^FAIL\t[^\t]+\t[0-9.]+s$$/FAIL PKG T/'); \
	    want=$$(printf -- '--- FAIL: %s (T)\n    context deadline exceeded\nFAIL\nexit status 1\nFAIL PKG T' "$$t"); \
	    if [ "$$got" = "$$want" ] && [ "$$before" = "$$after" ]; then \
	      echo "$$(echo "$$out" | grep -E '^fuzz: elapsed' | tail -1)"; \
	      echo "  passed: only \"context deadline exceeded\" and no new input in $$corpus, Go's fuzz coordinator race (go.dev/issue/75804), not a finding"; \
	      continue; \
	    fi; \
	    echo; echo "$$out"; exit 1; \
	  done; \
	done

SOAK_TIME ?= 60s
SOAK_STORE ?= local
SOAK_SEED ?= 0
# `make test` runs a one-minute soak on each store (internal/soak's tests).
soak: build minio ## chaos soak (docs/reliability.md): SOAK_TIME=60s, SOAK_STORE=local|minio, SOAK_SEED=N (0: random, printed)
	$(GO) build -o $(BIN)/cairn-soak ./cmd/cairn-soak
	CAIRN_MINIO=$(BIN)/minio $(BIN)/cairn-soak -bin $(BIN)/cairn -store $(SOAK_STORE) -time $(SOAK_TIME) -seed $(SOAK_SEED)

demo: build ## the demo loop on the local default store
	./internal/demo/demo.sh $(BIN)/cairn

lint: ## go vet + staticcheck (pinned)
	$(GO) vet ./...
	@test -x $(BIN)/staticcheck || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(BIN)/staticcheck ./...
	@set -e; for m in $(ADAPTERS); do (cd $$m && $(GO) vet ./... && $(BIN)/staticcheck ./...); done

# Clients (clients/): the TypeScript client, the LangGraph.js checkpointer
# and the Python package. npm dependencies are pinned by each package's
# package-lock.json and installed with `npm ci` once per lock change; the
# Python tooling comes from Debian (/usr/bin/python3).
CLIENTS_STAMP := $(CACHE)/clients
CLIENT_DEBS := python3-build python3-pytest python3-setuptools python3-wheel python3-venv

clients-deps: $(CLIENTS_STAMP)/typescript.stamp $(CLIENTS_STAMP)/langgraph.stamp $(CLIENTS_STAMP)/debs.stamp ## install the clients' pinned npm and Debian dependencies and build the npm packages
	cd clients/typescript && npm run --silent build
	cd clients/langgraph && npm run --silent build

$(CLIENTS_STAMP)/typescript.stamp: clients/typescript/package-lock.json
	cd clients/typescript && npm ci --no-audit --no-fund
	mkdir -p $(CLIENTS_STAMP) && touch $@

$(CLIENTS_STAMP)/langgraph.stamp: clients/langgraph/package-lock.json $(CLIENTS_STAMP)/typescript.stamp
	cd clients/langgraph && npm ci --no-audit --no-fund
	touch $@

$(CLIENTS_STAMP)/debs.stamp:
	@dpkg -s $(CLIENT_DEBS) >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y $(CLIENT_DEBS); }
	mkdir -p $(CLIENTS_STAMP) && touch $@

test-clients: build minio clients-deps ## the clients' suites: TS client, LangGraph validation (local store and MinIO) and 3-process e2e, Python package and wheel
	cd clients/typescript && CAIRN_BIN=$(BIN)/cairn npm test
	cd clients/langgraph && CAIRN_BIN=$(BIN)/cairn CAIRN_MINIO=$(BIN)/minio npm test
	cd clients/python && CAIRN_BIN=$(BIN)/cairn /usr/bin/python3 -m pytest -q tests

servers: minio versitygw ## build both S3 servers the tests start

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
python: ## make sure python3 is installed (Debian package python3): the Python client and example agent tests run it
	@command -v python3 >/dev/null || { echo "installing python3 (Debian package)"; $(SUDO) apt-get install -y python3; }

minio: $(BIN)/minio ## build the pinned MinIO server (about 6 minutes cold)
$(BIN)/minio:
	$(GO) install github.com/minio/minio@$(MINIO_VERSION)

hyparquet: $(NODE_DIR)/node_modules/hyparquet/package.json ## install the pinned hyparquet (npm), the independent Parquet reader the export tests use

$(NODE_DIR)/node_modules/hyparquet/package.json:
	npm install --prefix $(NODE_DIR) --save-exact --no-audit --no-fund hyparquet@$(HYPARQUET_VERSION)

parquet-readers: hyparquet $(NODE_DIR)/node_modules/@duckdb/node-api/package.json $(NODE_DIR)/node_modules/@dsnp/parquetjs/package.json ## install the pinned Parquet readers (npm) the export tests read exports with: hyparquet, DuckDB, parquetjs

$(NODE_DIR)/node_modules/@duckdb/node-api/package.json:
	npm install --prefix $(NODE_DIR) --save-exact --no-audit --no-fund @duckdb/node-api@$(DUCKDB_NODE_VERSION)

$(NODE_DIR)/node_modules/@dsnp/parquetjs/package.json:
	npm install --prefix $(NODE_DIR) --save-exact --no-audit --no-fund @dsnp/parquetjs@$(PARQUETJS_VERSION)

bench-export: build ## export throughput (steps/s) and peak RSS over 10,000 sessions with forks (docs/export.md)
	CAIRN_BIN=$(BIN)/cairn $(GO) test -run '^$$' -bench BenchmarkExport10k -benchtime 1x -timeout 30m ./internal/export

versitygw: $(BIN)/versitygw ## build the pinned versitygw S3 gateway
$(BIN)/versitygw:
	$(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

restic: $(RESTIC) ## fetch Debian's restic (pinned) into .cache/restic
$(RESTIC):
	mkdir -p $(CACHE)/restic/deb
	cd $(CACHE)/restic/deb && { apt-get download restic=$(RESTIC_VERSION) || { apt-get update && apt-get download restic=$(RESTIC_VERSION); }; }
	dpkg -x $(CACHE)/restic/deb/restic_$(subst :,%3a,$(RESTIC_VERSION))_*.deb $(CACHE)/restic
	test -x $(RESTIC)

clean: ## remove built binaries and caches
	rm -rf $(CACHE)
