# End-to-end tests on a real cluster (issue 6), included by the root Makefile:
#   make test-e2e                 local single-node cluster (hack/local-cluster), torn down afterwards
#   E2E_KEEP=1 make test-e2e      keep the cluster and the test namespaces
#   KUBECONFIG=... make test-e2e  any cluster that has the benchrun.local images (e.g. kind in CI)
# Test files carry the build tag e2e: `go test ./...` and `make test` never run them.
# The output is go test -v's; hack/test-failures repeats each failed test's last lines at the end
# (parallel tests interleave, and CI shows a long log's head and tail).
E2E_TIMEOUT ?= 60m
E2E_RUN ?=
# Tests marked parallel(t) (test/e2e/helpers_test.go) run this many at once, after the others.
E2E_PARALLEL ?= 4

##@ End to end

.PHONY: e2e-prereqs
e2e-prereqs: ## Install (root, apt-get) or name the host packages make test-e2e needs (debootstrap, containerd, ...).
	@hack/prereqs.sh e2e

.PHONY: test-e2e
test-e2e: e2e-prereqs $(HELM) $(BIN)/argocd ## Run test/e2e on a real cluster (KUBECONFIG or the local one); E2E_RUN=regex selects tests.
	go build -o $(BIN)/test-failures ./hack/test-failures
	go test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -parallel $(E2E_PARALLEL) -json $(if $(E2E_RUN),-run '$(E2E_RUN)') ./test/e2e/... | $(BIN)/test-failures

# A real Argo CD for TestArgoCDApplication: its application controller and repo server (v3.2.11)
# built from Go modules into one binary (hack/argocd); they run on the host against the cluster.
$(BIN)/argocd: hack/argocd/main.go hack/argocd/go.mod hack/argocd/go.sum
	@mkdir -p $(BIN)
	@echo "building bin/argocd (Argo CD's application controller and repo server; several minutes on a cold cache)"
	cd hack/argocd && go build -o $(BIN)/.argocd.tmp . && mv -f $(BIN)/.argocd.tmp $(BIN)/argocd

.PHONY: vet-e2e
vet-e2e: ## go vet the e2e tests (build tag e2e).
	go vet -tags e2e ./test/e2e/
