# Local runner targets (issue 4), included by the root Makefile:
#   make k6         benchrun's k6 (k6 v2 + extensions) → bin/k6, rebuilt when its sources change
#   make benchrun   the CLI → bin/benchrun (also usable as the kubectl plugin kubectl-benchrun)
#   make demo       quick start without a cluster: local Redis, config/samples/quickstart.yaml,
#                   2 local k6 runners, 3 scenarios × 20 s; prints the tables

BIN ?= $(abspath bin)
DEMO_RUN ?= config/samples/quickstart.yaml
DEMO_RUNNERS ?= 2
DEMO_OUT ?= benchrun-results/demo

K6_SOURCES := $(shell find cmd/k6 k6ext internal/results internal/livemetrics -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum
BENCHRUN_SOURCES := $(shell find cmd/benchrun internal api config/crd -name '*.go' -not -name '*_test.go' 2>/dev/null) \
	$(wildcard config/crd/*.yaml config/crd/bases/*.yaml) go.mod go.sum

##@ Local runner

.PHONY: k6
k6: $(BIN)/k6 ## Build benchrun's k6 (bin/k6; several minutes the first time).

$(BIN)/k6: $(K6_SOURCES)
	@mkdir -p $(BIN)
	@echo "building bin/k6 (k6 v2 + benchrun extensions; several minutes on a cold cache)"
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/.k6.tmp ./cmd/k6 && mv -f $(BIN)/.k6.tmp $(BIN)/k6

.PHONY: benchrun
benchrun: $(BIN)/benchrun ## Build the benchrun CLI (bin/benchrun).

$(BIN)/benchrun: $(BENCHRUN_SOURCES)
	@mkdir -p $(BIN)
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/.benchrun.tmp ./cmd/benchrun && mv -f $(BIN)/.benchrun.tmp $(BIN)/benchrun

.PHONY: redis-server-present
redis-server-present: ## Make sure redis-server is installed (apt-get when root).
	@command -v redis-server >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "redis-server not found: installing it with apt-get"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null; \
		command -v redis-server >/dev/null 2>&1 || { echo "apt-get did not install redis-server"; exit 1; }; \
	else \
		echo "redis-server is needed and not installed. Install it, then run make demo again:"; \
		echo "  Debian/Ubuntu: sudo apt-get install redis-server"; \
		echo "  Fedora/RHEL:   sudo dnf install redis"; \
		echo "  macOS:         brew install redis"; \
		exit 1; \
	fi

.PHONY: valkey-server-present
valkey-server-present: ## Make sure valkey-server is installed (hack/install-valkey.sh when root on Debian bookworm).
	@command -v valkey-server >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ] && grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release; then \
		echo "valkey-server not found: installing it from bookworm-backports (hack/install-valkey.sh)"; \
		hack/install-valkey.sh; \
	else \
		echo "*** valkey-server not found: TestRunSuiteBackends will fail. Install Valkey 8 (Debian bookworm: sudo hack/install-valkey.sh) ***"; \
	fi

.PHONY: demo
demo: $(BIN)/k6 $(BIN)/benchrun redis-server-present ## Benchmark a local Redis without a cluster (quick start, ~1.5 min).
	$(BIN)/benchrun run -f $(DEMO_RUN) --runners $(DEMO_RUNNERS) --out-dir $(DEMO_OUT)
