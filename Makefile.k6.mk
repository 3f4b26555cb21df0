# benchrun's k6 binary: k6 v2.2.0 + xk6-redis v0.4.3 + k6/x/benchrun + k6/x/hetu + the
# "benchrun" output, built from cmd/k6 (no xk6). Include from the root Makefile after
# hack/make/local.mk (which already provides `make k6`; this file then adds only the test and
# measurement targets):
#   include Makefile.k6.mk
K6_BIN ?= bin/k6

.PHONY: test-k6 bench-redis

ifndef K6_SOURCES # hack/make/local.mk not included: provide `make k6` here
.PHONY: k6
k6: ## Build bin/k6 (benchrun's k6 with its extensions).
	CGO_ENABLED=0 go build -trimpath -o $(K6_BIN) ./cmd/k6
endif

test-k6: k6 ## Test the k6 extensions and scripts against real redis-server (and HeTu when cached).
	BENCHRUN_K6=$(abspath $(K6_BIN)) go test ./cmd/k6/... ./k6ext/... ./internal/hetutest/...

bench-redis: k6 ## Compare bin/k6 GET rate with redis-benchmark (CONNS=50 BENCH_SECONDS=5).
	hack/bench-redis.sh $(or $(CONNS),50) $(or $(BENCH_SECONDS),5)
