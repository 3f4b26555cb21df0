package validation

import (
	"context"
	"strings"
	"testing"
)

// TestAdmissionEdgesAccepted: the boundary values of the issue-10 admission rules stay valid
// (limits equal to requests in other units, timeouts.run equal to the scenarios' total, port
// 65535, TLS settings with TLS on, the params each built-in type reads, free script params, extraConfig
// URLs without a password).
func TestAdmissionEdgesAccepted(t *testing.T) {
	v := newValidator(t)
	for _, tc := range []struct{ name, spec string }{
		{"limits equal requests", `
target: {redis: {resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1000m, memory: 1024Mi}}}}
load: {scenarios: [{name: a, type: redis.get}], runners: {resources: {requests: {cpu: 500m}, limits: {cpu: '2', memory: 1Gi}}}}`},
		{"run timeout equals the scenarios", `
target: {redis: {}}
load: {duration: 1m, scenarios: [{name: a, type: redis.get}, {name: b, type: redis.set, duration: 90s}, {name: c, type: redis.ping, requests: 10}]}
timeouts: {run: 2m30s}`},
		{"port 65535", `
target: {external: {kind: redis, addresses: ['r:65535', '[::1]:1'], readAddresses: ['r:1']}}
load: {scenarios: [{name: a, type: redis.get}]}`},
		{"tls on with its settings", `
target: {external: {kind: redis, addresses: ['r:6379'], tls: {enabled: true, serverName: r, insecureSkipVerify: true, caSecretRef: {name: ca, key: ca.crt}}}}
load: {scenarios: [{name: a, type: redis.get}]}`},
		{"tls off alone", `
target: {external: {kind: redis, addresses: ['r:6379'], tls: {enabled: false, insecureSkipVerify: false}}}
load: {scenarios: [{name: a, type: redis.get}]}`},
		{"params each type reads", `
target: {hetu: {extraConfig: {CLIENT_SEND_LIMITS: '[]'}, backend: {redis: {config: {user: 'bench on #a1b2 ~* +@all'}}}}}
load: {scenarios: [{name: a, type: hetu.get, params: {batch: '5', seed: 'true'}}, {name: b, type: redis.get, params: {prefill: 'false', serverCounts: 'false'}}, {name: c, type: ycsb, params: {serverCounts: 'false'}}]}`},
		{"extraConfig URLs without a password", `
target: {hetu: {extraConfig: {MASTER: 'redis://r:6379/0', SERVANTS: '["redis://user@r:6379", "http://h:80/a:b@c"]', X: 'a:b@c'}, backend: {redis: {}}}}
load: {scenarios: [{name: a, type: hetu.get}]}`},
		{"custom env: credentials from a Secret, PWD literal", `
target: {custom: {image: echo, ports: [{name: echo, port: 7007}], readinessProbe: {tcpSocket: {port: echo}}, env: [{name: API_TOKEN, secretKeyRef: {name: s, key: t}}, {name: PWD, value: /srv}, {name: PASSWORD_FILE_MODE, value: ''}]}}
load: {scenarios: [{name: a, type: tcp.echo}]}`},
		{"free script params", `
target: {redis: {}}
load: {scenarios: [{name: a, type: script, script: {configMapName: s}, params: {readProportion: '0.9', API_TOKEN_NAME: x}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: bench.benchrun.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: edge}\nspec:\n" + indent(strings.TrimPrefix(tc.spec, "\n"))
			if _, err := v.ParseFile(context.Background(), strings.NewReader(doc)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFaultsDuringArrivalAccepted: a fault during a ramp or a search, past load.duration but
// inside the scenario's length, is valid (issue 25: it was refused).
func TestFaultsDuringArrivalAccepted(t *testing.T) {
	v := newValidator(t)
	for _, spec := range []string{`
target: {redis: {}}
load: {duration: 4s, scenarios: [{name: ramp, type: redis.get, arrival: {stages: [{target: 100, duration: 4s}, {target: 200, duration: 4s}]}}]}
faults: [{scenario: ramp, offset: 6s, action: kill, role: master}]
timeouts: {run: 8s}`, `
target: {redis: {}}
load: {duration: 10s, scenarios: [{name: find, type: redis.get, arrival: {search: {startRate: 10, factor: 2, stepDuration: 5s, maxP99: 5ms}}}]}
faults: [{scenario: find, offset: 39s, action: pause, duration: 900ms, role: master}]
timeouts: {run: 40s}`} {
		if _, err := v.ParseFile(context.Background(), strings.NewReader(doc("edge", strings.TrimPrefix(spec, "\n")))); err != nil {
			t.Error(err)
		}
	}
}

// TestIssue25EdgesAccepted: the right values the issue-25 class rules' messages suggest stay
// valid (declared port references, tolerations of every legal shape, tuning config, an auth key
// with the crypto layer, a selector with labels, a URL query without credentials).
func TestIssue25EdgesAccepted(t *testing.T) {
	v := newValidator(t)
	for _, spec := range []string{`
target: {custom: {image: echo, args: ['-listen=:$(BENCHRUN_PORT_ECHO)', '-admin=:$(BENCHRUN_PORT_ADMIN_API)'], env: [{name: ECHO_PORT, value: '$(BENCHRUN_PORT_ECHO)'}], ports: [{name: echo, port: 7007}, {name: admin-api, port: 7008}], readinessProbe: {tcpSocket: {port: echo}}, tolerations: [{operator: Exists}, {key: dedicated, operator: Equal, value: load, effect: NoSchedule}, {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]}}
load: {scenarios: [{name: a, type: tcp.echo}]}`, `
target: {redis: {config: {io-threads: '4', maxmemory-policy: allkeys-lru, appendonly: 'yes'}, passwordSecretRef: {name: redis.auth-1, key: redis_password.v1}}}
load: {scenarios: [{name: a, type: redis.get}]}
baseline: {selector: {matchLabels: {suite: nightly}, matchExpressions: [{key: x, operator: Exists}, {key: tier, operator: NotIn, values: [a]}]}}
collect: {prometheusRemoteWriteURL: 'https://prom.example.com/api/v1/write?tenant=bench'}`, `
target: {hetu: {packetLayers: msgpack+zlib+crypto, authKeySecretRef: {name: hetu, key: authKey}, backend: {redis: {}}}}
load: {scenarios: [{name: a, type: hetu.get}]}
baseline: {name: other-run}`, `
target: {redis: {}}
load: {scenarios: [{name: a, type: redis.get}]}
baseline: {selector: {matchExpressions: [{key: version, operator: Exists}, {key: version, operator: NotIn, values: [v2]}]}}`, `
target: {external: {kind: http, addresses: ['web:80']}}
load: {scenarios: [{name: a, type: http, http: {path: '/v1/items?id=1&tokens=3', headers: {Accept: application/json, X-Tenant: bench}}}]}`} {
		if _, err := v.ParseFile(context.Background(), strings.NewReader(doc("edge", strings.TrimPrefix(spec, "\n")))); err != nil {
			t.Error(err)
		}
	}
}

// TestIssue25SettingsAccepted: the right values the class-2 messages suggest stay valid.
func TestIssue25SettingsAccepted(t *testing.T) {
	v := newValidator(t)
	for _, spec := range []string{`
target: {external: {kind: http, addresses: ['web:80']}}
load: {runners: {parallelism: 4}, scenarios: [{name: a, type: http, bodySize: 512, http: {method: POST, path: /items}, arrival: {stages: [{target: 1000, duration: 30s}, {target: 0, duration: 10s}]}}]}
thresholds: [{expr: 'errorRate <= 0.05'}, {expr: 'errorRate < 1.0'}, {expr: 'errorRate <= 0.999'}, {expr: 'p99 < 50', abortOnFail: true, delayAbortEval: 10s}]`, `
target: {redis: {}}
load: {scenarios: [{name: a, type: redis.get}]}
baseline: {name: earlier}
thresholds: [{expr: 'cps >= +0%', abortOnFail: true}, {expr: 'cps >= -0%'}, {expr: 'cps >= -99.9%'}, {expr: 'p99 > -100%'}, {expr: 'max >= 0.001'}]`, `
target: {external: {kind: redis, addresses: ['r:6379'], usernameSecretRef: {name: redis-auth, key: user}, passwordSecretRef: {name: redis-auth, key: password}}}
load: {scenarios: [{name: a, type: redis.command, redisCommand: {command: 'SET key:__rand_int__ __data__', dataSize: 100}}]}
collect: {prometheusRemoteWriteURL: 'https://prom:9090/api/v1/write', prometheusRemoteWrite: {tls: {insecureSkipVerify: true}}}`, `
target: {hetu: {extraConfig: {CLIENT_SEND_LIMITS: '[[100, 1]]'}, backend: {redis: {}}}}
load: {scenarios: [{name: a, type: hetu.get}, {name: b, type: hetu.call, hetuCall: {rpc: exchange_data, args: ["'__rand_str3__'", __rand_int__, x__rand_str__]}}]}`} {
		if _, err := v.ParseFile(context.Background(), strings.NewReader(doc("edge", strings.TrimPrefix(spec, "\n")))); err != nil {
			t.Error(err)
		}
	}
}

// TestIssue25FaultsAndDelaysAccepted: faults on one role that do not overlap, a pause and a
// kill of different roles at once, and a delayAbortEval inside a load that a ramp lengthens.
func TestIssue25FaultsAndDelaysAccepted(t *testing.T) {
	v := newValidator(t)
	spec := `target: {redis: {mode: ha}}
load: {duration: 10s, scenarios: [{name: ramp, type: redis.get, arrival: {stages: [{target: 100, duration: 40s}]}}, {name: cmd, type: redis.command, redisCommand: {command: 'HSET key:__rand_int__ f __data__'}}]}
faults: [{scenario: ramp, offset: 10s, action: pause, duration: 5s, role: master}, {scenario: ramp, offset: 15s, action: kill, role: master}, {scenario: ramp, offset: 11s, action: kill, role: replica}]
thresholds: [{expr: 'p99 < 5', abortOnFail: true, delayAbortEval: 45s}]
`
	if _, err := v.ParseFile(context.Background(), strings.NewReader(doc("edge", spec))); err != nil {
		t.Error(err)
	}
}

// TestIssue25ClassesRightValuesAccepted: the right values the messages of the issue-25 classes
// suggest stay valid: resource names and quantities, a threshold range, batch values, selectors.
func TestIssue25ClassesRightValuesAccepted(t *testing.T) {
	v := newValidator(t)
	for _, spec := range []string{`
target: {redis: {resources: {requests: {cpu: 500m, memory: 512Mi, ephemeral-storage: 1Gi}, limits: {cpu: 2, memory: 1Gi, hugepages-2Mi: 64Mi}}}}
load: {runners: {resources: {limits: {nvidia.com/gpu: 1, example.com/fpga: '2'}}}, scenarios: [{name: a, type: redis.get, params: {batch: '100'}}, {name: b, type: redis.set, params: {batch: '10000'}}]}
thresholds: [{expr: 'p99 > 1'}, {expr: 'p99 < 20'}, {expr: 'p99 <= 20'}, {expr: 'p99 >= 1.5'}, {scenario: a, expr: 'cps <= 1000'}, {scenario: b, expr: 'cps >= 2000'}, {expr: 'cps >= 1', abortOnFail: true}]`, `
target: {redis: {}}
load: {scenarios: [{name: a, type: script, script: {configMapName: s}, params: {batch: anything}}]}
baseline: {selector: {matchExpressions: [{key: suite, operator: In, values: [nightly]}, {key: broken, operator: DoesNotExist}, {key: team, operator: Exists, values: []}]}}
thresholds: [{expr: 'errorRate <= 0.5'}, {expr: 'cps >= -50%', abortOnFail: true}, {expr: 'cps <= +20%'}, {expr: 'cps <= 100'}, {expr: 'p99 <= -5%'}, {expr: 'p99 >= -10%'}]`} {
		if _, err := v.ParseFile(context.Background(), strings.NewReader(doc("edge", strings.TrimPrefix(spec, "\n")))); err != nil {
			t.Error(err)
		}
	}
}

// TestMetadataNameErrorNamesTheField: a rule on metadata.name is printed at metadata.name, as
// the API server prints it (the CRD declares metadata.name), with the name in the message,
// never at "<nil>".
func TestMetadataNameErrorNamesTheField(t *testing.T) {
	v := newValidator(t)
	_, err := v.ParseFile(context.Background(), strings.NewReader(doc("1k-get", "target: {redis: {}}\nload: {scenarios: [{name: a, type: redis.get}]}\n")))
	if err == nil || !strings.Contains(err.Error(), `metadata.name: Invalid value: "object": metadata.name 1k-get must start with a lowercase letter`) || strings.Contains(err.Error(), "<nil>") {
		t.Fatalf("got %v", err)
	}
}

// TestResourcesDecode: resources written as a whole number or a string decode into the pod's
// quantities (benchrun's ResourceRequirements round-trips through the typed API).
func TestResourcesDecode(t *testing.T) {
	v := newValidator(t)
	f, err := v.ParseFile(context.Background(), strings.NewReader(doc("res", `target: {redis: {}}
load: {runners: {resources: {requests: {cpu: 2, memory: 512Mi}, limits: {nvidia.com/gpu: '1'}}}, scenarios: [{name: a, type: redis.get}]}
`)))
	if err != nil {
		t.Fatal(err)
	}
	res := f.Runs[0].Spec.Load.Runners.Resources.Core()
	if res.Requests.Cpu().String() != "2" || res.Requests.Memory().String() != "512Mi" || res.Limits.Name("nvidia.com/gpu", "").String() != "1" {
		t.Errorf("resources %+v", res)
	}
}
