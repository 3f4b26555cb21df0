# benchrun — developer entry points. `make help` lists them.
#
# Everything builds offline from the Go module proxy and Debian packages: tools are built
# from pinned modules into bin/, Kubernetes test binaries into $(BENCHRUN_CACHE).

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

ROOT := $(abspath .)
BIN := $(ROOT)/bin
export BENCHRUN_CACHE ?= $(HOME)/.cache/benchrun
export GOFLAGS ?= -buildvcs=false
export GOTOOLCHAIN ?= local

# Pinned tool versions (each one a version the Go module proxy serves; hack/install-tool.sh builds it).
CONTROLLER_TOOLS_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.1
GOLANGCI_LINT_VERSION ?= v2.15.0
HELM_VERSION ?= v3.22.0
ACTIONLINT_VERSION ?= v1.7.12
K8S_VERSION ?= v1.34.4

CONTROLLER_GEN := $(BIN)/controller-gen
KUSTOMIZE := $(BIN)/kustomize
GOLANGCI_LINT := $(BIN)/golangci-lint
HELM := $(BIN)/helm
ACTIONLINT := $(BIN)/actionlint
ENVTEST_ASSETS := $(BENCHRUN_CACHE)/k8s-$(K8S_VERSION)/bin

GO_TEST_FLAGS ?= -count=1 -timeout 20m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CEL type lists (hack/workload-cel), the CRD, RBAC and deepcopy code from the Go types.
	go run ./hack/workload-cel
	$(CONTROLLER_GEN) object paths="./api/..."
	$(CONTROLLER_GEN) rbac:roleName=manager crd:allowDangerousTypes=true paths="./api/..." paths="./controllers/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	go run ./hack/crd-metadata-name config/crd/bases/bench.benchrun.io_benchmarkruns.yaml config/crd/bases/bench.benchrun.io_benchmarksuites.yaml
	@mkdir -p charts/benchrun/crds && cp config/crd/bases/*.yaml charts/benchrun/crds/
	@hack/sync-chart-rbac.sh

.PHONY: generate
generate: manifests ## Alias of manifests.

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-release
lint-release: $(ACTIONLINT) ## actionlint on .github/workflows; the Dockerfiles' Go stages built as plain go build.
	$(ACTIONLINT) -no-color
	hack/check-dockerfiles.sh

.PHONY: verify-generated
verify-generated: manifests ## Fail if generated files are not committed.
	@git diff --exit-code -- api config charts/benchrun/crds charts/benchrun/files || { echo "generated files are stale: run 'make manifests' and commit"; exit 1; }

##@ Test

.PHONY: test
test: envtest-assets $(BIN)/k6 $(BIN)/argocd-health $(HELM) valkey-server-present ## Unit tests, envtest suites on a real kube-apiserver, k6 against real Redis/HeTu, the chart, Argo CD health Lua through Argo CD's code (the CI command).
	@$(HETU_NOTICE)
	@echo "KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) BENCHRUN_K6=$(BIN)/k6 BENCHRUN_ARGOCD_HEALTH=$(BIN)/argocd-health HELM=$(HELM) go test $(GO_TEST_FLAGS) ./..."
	@KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) BENCHRUN_K6=$(BIN)/k6 BENCHRUN_ARGOCD_HEALTH=$(BIN)/argocd-health HELM=$(HELM) go test $(GO_TEST_FLAGS) ./... || { rc=$$?; $(HETU_NOTICE); exit $$rc; }
	@$(HETU_NOTICE)

# Argo CD's Lua health code (github.com/argoproj/argo-cd/v3) in its own Go module, so the main
# module's dependency graph stays small; about 3 CPU-minutes on a cold build cache.
$(BIN)/argocd-health: hack/argocd-health/main.go hack/argocd-health/go.mod hack/argocd-health/go.sum
	@mkdir -p $(BIN)
	@echo "building bin/argocd-health (Argo CD's Lua health code; a few minutes on a cold cache)"
	cd hack/argocd-health && go build -o $(BIN)/.argocd-health.tmp . && mv -f $(BIN)/.argocd-health.tmp $(BIN)/argocd-health

# Printed before and after make test when the HeTu tests (k6 against a real HeTu server) will
# be skipped: they need the HeTu runtime (hack/hetu-runtime.sh, Python 3.14 rootfs) and root.
HETU_RUNTIME := $(BENCHRUN_CACHE)/hetu-runtime/rootfs/opt/hetu/bin/python
HETU_NOTICE = if [ ! -L $(HETU_RUNTIME) ] && [ ! -e $(HETU_RUNTIME) ]; then \
	echo "*** HeTu tests are SKIPPED: no HeTu runtime in $(BENCHRUN_CACHE)/hetu-runtime. Build it (root, a few minutes, cached): sudo hack/hetu-runtime.sh ***"; \
	elif [ "$$(id -u)" != 0 ]; then echo "*** HeTu tests are SKIPPED: they need root (hack/hetu-server.sh uses unshare + chroot) ***"; fi

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver, etcd and kubectl for envtest from Go modules (cached).
	@hack/build-k8s-binaries.sh envtest >/dev/null

.PHONY: fuzz
fuzz: ## Run every fuzz target of the runner protocol and result decoding for FUZZTIME each (default 10s).
	go test -run XXX -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./internal/results/
	for f in FuzzDecodeResult FuzzParseState FuzzDecodeInvocation FuzzHostilePath; do \
		go test -run XXX -fuzz "^$$f$$" -fuzztime $(FUZZTIME) ./internal/runner/ || exit 1; done

FUZZTIME ?= 10s

##@ Performance

.PHONY: bench
bench: $(BIN)/k6 redis-server-present ## Measured claims with ratios against baselines in the same run.
	hack/bench.sh

##@ Build

.PHONY: build
build: ## Build the manager binary.
	CGO_ENABLED=0 go build -trimpath -o $(BIN)/manager ./cmd/manager

include hack/make/local.mk
include hack/make/k6.mk
include hack/make/cluster.mk
include hack/make/e2e.mk
include hack/make/docs.mk

##@ Tools

$(CONTROLLER_GEN):
	hack/install-tool.sh controller-gen sigs.k8s.io/controller-tools@$(CONTROLLER_TOOLS_VERSION) ./cmd/controller-gen

$(KUSTOMIZE):
	hack/install-tool.sh kustomize sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION) .

$(GOLANGCI_LINT):
	hack/install-tool.sh golangci-lint github.com/golangci/golangci-lint/v2@$(GOLANGCI_LINT_VERSION) ./cmd/golangci-lint

$(HELM):
	hack/install-tool.sh helm helm.sh/helm/v3@$(HELM_VERSION) ./cmd/helm

$(ACTIONLINT):
	hack/install-tool.sh actionlint github.com/rhysd/actionlint@$(ACTIONLINT_VERSION) ./cmd/actionlint

.PHONY: tools
tools: $(CONTROLLER_GEN) $(KUSTOMIZE) $(GOLANGCI_LINT) $(HELM) $(ACTIONLINT) ## Build every pinned tool into bin/.
