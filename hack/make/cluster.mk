# Local Kubernetes cluster, images and the Helm chart (issue 6), included by the root Makefile:
#   make cluster-up       single-node cluster on this machine (root; binaries cached in $(BENCHRUN_CACHE))
#   make images           core images → $(BENCHRUN_CACHE)/images, imported when the cluster runs
#   make deploy-local     cluster-up + images + helm upgrade --install of charts/benchrun
#   make cluster-down     stop everything, remove iptables chains, cni0, mounts; restore sysctls
# Uses KUBECONFIG when set (any cluster), else the local cluster's admin kubeconfig.

BIN ?= $(abspath bin)
HELM ?= $(BIN)/helm
LOCAL_KUBECONFIG := $(BENCHRUN_CACHE)/cluster/kubeconfig/admin.kubeconfig
CHART_KUBECONFIG = $(or $(KUBECONFIG),$(LOCAL_KUBECONFIG))
CHART_NAMESPACE ?= benchrun-system
CHART_RELEASE ?= benchrun
CHART_VALUES ?=
# The local images (benchrun.local/*) instead of the chart's registry defaults; empty for a
# cluster that pulls the published images.
CHART_LOCAL_VALUES ?= -f hack/local-cluster/values-local.yaml
IMAGES ?= core
# The locally built manager image keeps its tag (:dev) when rebuilt: pass its config digest as a
# pod annotation so `make helm-install` rolls the manager onto a rebuilt image.
MANAGER_IMAGE_ID = $(word 2,$(shell cat $(BENCHRUN_CACHE)/images/manager.tar.id 2>/dev/null))
MANAGER_IMAGE_ID_SET = $(if $(MANAGER_IMAGE_ID),--set-string 'podAnnotations.benchrun\.io/image-id=$(subst :,-,$(MANAGER_IMAGE_ID))')

##@ Local cluster

.PHONY: cluster-up
cluster-up: ## Start the local single-node cluster (idempotent; prints the KUBECONFIG path).
	hack/local-cluster/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and remove every trace (processes, iptables, cni0, mounts, sysctls).
	hack/local-cluster/cluster.sh down

.PHONY: cluster-status
cluster-status: ## Show the local cluster's processes, node and pods.
	hack/local-cluster/cluster.sh status

.PHONY: images
images: ## Build images without a registry (IMAGES=core|extra|all|NAME...) and import them when the cluster runs.
	hack/images/build.sh $(IMAGES)

.PHONY: chart-rbac
chart-rbac: ## Copy config/rbac/role.yaml into the chart (run after make manifests).
	hack/sync-chart-rbac.sh

.PHONY: chart-lint
chart-lint: $(HELM) ## helm lint + helm template of charts/benchrun; RBAC copy in sync.
	hack/sync-chart-rbac.sh --check
	$(HELM) lint --strict charts/benchrun
	$(HELM) lint --strict charts/benchrun $(CHART_LOCAL_VALUES)
	go run ./hack/chart-docs -check
	$(HELM) template $(CHART_RELEASE) charts/benchrun -n $(CHART_NAMESPACE) --include-crds >/dev/null

.PHONY: chart-docs
chart-docs: ## Regenerate charts/benchrun/README.md's values table from values.yaml's `# --` comments.
	go run ./hack/chart-docs

.PHONY: chart-dry-run
chart-dry-run: $(HELM) ## Server-side dry-run apply of the rendered chart against the cluster's kube-apiserver.
	$(HELM) template $(CHART_RELEASE) charts/benchrun -n $(CHART_NAMESPACE) --include-crds $(CHART_LOCAL_VALUES) $(CHART_VALUES) | \
		KUBECONFIG=$(CHART_KUBECONFIG) $(BENCHRUN_CACHE)/k8s-$(K8S_VERSION)/bin/kubectl apply --server-side --dry-run=server -n $(CHART_NAMESPACE) -f -

.PHONY: deploy-local
deploy-local: cluster-up images helm-install ## Local cluster + images + the chart installed.

.PHONY: helm-install
helm-install: $(HELM) ## helm upgrade --install the chart (CRDs applied server-side first, so they upgrade too).
	KUBECONFIG=$(CHART_KUBECONFIG) $(BENCHRUN_CACHE)/k8s-$(K8S_VERSION)/bin/kubectl apply --server-side --force-conflicts --field-manager=benchrun-chart -f charts/benchrun/crds/
	KUBECONFIG=$(CHART_KUBECONFIG) $(HELM) upgrade --install $(CHART_RELEASE) charts/benchrun -n $(CHART_NAMESPACE) \
		--create-namespace --wait --timeout 5m $(MANAGER_IMAGE_ID_SET) $(CHART_LOCAL_VALUES) $(CHART_VALUES)

.PHONY: redis-operator-install
redis-operator-install: ## Install the OT redis-operator v0.23.0 (image from `make images IMAGES=redis-operator`).
	KUBECONFIG=$(CHART_KUBECONFIG) hack/local-cluster/redis-operator.sh install

.PHONY: chart-smoke
chart-smoke: $(HELM) ## Dry-run + helm install + a 30 s quick-start BenchmarkRun on the cluster; prints its status.
	KUBECONFIG=$(CHART_KUBECONFIG) HELM=$(HELM) hack/local-cluster/smoke.sh

.PHONY: helm-uninstall
helm-uninstall: $(HELM) ## Uninstall the release (the CRD and the BenchmarkRuns stay).
	KUBECONFIG=$(CHART_KUBECONFIG) $(HELM) uninstall $(CHART_RELEASE) -n $(CHART_NAMESPACE) --wait
