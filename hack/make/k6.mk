# benchrun's k6 binary: k6 v2.2.0 + xk6-redis v0.4.3 + k6/x/benchrun + k6/x/hetu + the
# "benchrun" output, built from cmd/k6 (no xk6). Include from the root Makefile after
# hack/make/local.mk (which provides `make k6`); this file adds the test and measurement targets:
#   include hack/make/k6.mk
K6_BIN ?= bin/k6

.PHONY: test-k6 bench-redis


test-k6: k6 ## Test the k6 extensions and scripts against real redis-server (and HeTu when cached).
	BENCHRUN_K6=$(abspath $(K6_BIN)) go test ./cmd/k6/... ./k6ext/... ./internal/hetutest/...

bench-redis: k6 ## Compare bin/k6 GET rate with redis-benchmark (CONNS=50 BENCH_SECONDS=5).
	hack/bench-redis.sh $(or $(CONNS),50) $(or $(BENCH_SECONDS),5)
