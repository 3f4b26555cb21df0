# The docs site (issue 23), included by the root Makefile:
#   make docs         build the site with mkdocs build --strict (MkDocs + Material, pinned in
#                     docs/requirements.txt, installed into $(BENCHRUN_CACHE)/docs-venv)
#   make docs-api     regenerate docs/reference/api.md from api/v1alpha1 (crd-ref-docs)
#   make docs-cli     regenerate docs/reference/cli.md from the CLI's --help
#   make docs-check   fail when either generated page is stale (CI)

CRD_REF_DOCS_VERSION ?= v0.3.0
CRD_REF_DOCS := $(BIN)/crd-ref-docs

##@ Docs

.PHONY: docs
docs: ## Build the docs site strictly (mkdocs build --strict; the venv is installed on first use).
	hack/docs.sh build

.PHONY: docs-serve
docs-serve: ## Serve the docs site on http://127.0.0.1:8000 while editing.
	hack/docs.sh serve

.PHONY: docs-api
docs-api: $(CRD_REF_DOCS) ## Regenerate docs/reference/api.md from the Go types (crd-ref-docs).
	hack/docs.sh api

.PHONY: docs-cli
docs-cli: ## Regenerate docs/reference/cli.md from benchrun's own --help.
	hack/docs.sh cli

.PHONY: docs-check
docs-check: $(CRD_REF_DOCS) ## Fail when docs/reference/api.md or cli.md differ from what the code generates.
	hack/docs.sh api --check
	hack/docs.sh cli --check

$(CRD_REF_DOCS):
	hack/install-tool.sh crd-ref-docs github.com/elastic/crd-ref-docs@$(CRD_REF_DOCS_VERSION) .
