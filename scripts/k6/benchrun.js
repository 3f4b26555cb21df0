// benchrun's generic entry script: runs the built-in scenarios of a BenchmarkRun, one after
// another, as internal/plan describes them. The operator (runner pods) and `benchrun run`
// (local processes) both start it; nothing here is specific to either.
//
//   BENCHRUN_PLAN    JSON {scenarios: [{name, type, address (its BENCHRUN_TARGET entry), exec
//                    (script scenarios), startMs, durationMs, vus, keySpace,
//                    bodySize, pipeline, http: {method, path, headers, keepAlive, protocol},
//                    grpc: {method, request, bodyField, metadata}, hetuCall: {rpc, args}, ycsb: {read, update, insert, recordCount, distribution}, params,
//                    requests (this runner's share of a fixed count), command, dataSize,
//                    arrival: {segments: [{from, to, durationMs, step}], maxVUs,
//                    stop: {maxP99Ms, maxErrorPercent, after} (a search's early stop)} (an open model)}],
//                    graceMs}
//   BENCHRUN_TARGET  JSON {redis: {addrs, readAddrs, tls...}, hetu: {addrs, instance, layers},
//                    tcp: {addrs, tls...}, http: {addrs, tls...}, grpc: {addrs, tls...}}
//   BENCHRUN_RUNNER  the runner name (read by the benchrun output)
//   BENCHRUN_RUNNER_INDEX, BENCHRUN_RUNNER_COUNT: this runner's slot, read by k6/x/benchrun:
//                    ycsb inserts of runner i of n take every n-th new key from i
//   BENCHRUN_REDIS_USERNAME, BENCHRUN_REDIS_PASSWORD, BENCHRUN_HETU_AUTHKEY: credentials
//   BENCHRUN_REDIS_TLS_CA: PEM CA bundle for TLS to Redis (from the target's caSecretRef)
//   BENCHRUN_TLS_CA: PEM CA bundle for TLS to a tcp, http or grpc endpoint (from the target's caSecretRef)
//
// Each plan scenario becomes a constant-vus k6 scenario of the same name (shared-iterations
// with a budget shared by the VUs when it has requests); calls are issued
// and recorded by the Go hot paths of k6/x/benchrun and k6/x/hetu. Scenario params:
//   batch   calls per k6 iteration (default 100 for redis.get/set/ping, ycsb and tcp.echo, 20 for
//           http and redis.upsert, 10 for hetu.*)
//   seed    "true" on a hetu.* scenario: create rows 1..keySpace (app's seed RPC) in setup();
//           slow: about 3 minutes for 30000 rows on 2 cores, so off by default (the seeds'
//           just_get answers misses the same way)
//   prefill "false" on a redis.get or redis.upsert scenario: do not write the keys/rows first
// redis.upsert rows 1..keySpace are created in setup() when the upsert index is empty, so the
// scenario measures the steady state of the seeds (updates) rather than a burst of
// conflicting inserts into an empty table.
// VUs are spread round-robin over the target's addresses. The counter metric benchrun_calls
// (calls issued, per iteration) lets `benchrun run` show live calls/s through k6's REST API.
import benchrun from 'k6/x/benchrun';
import hetu from 'k6/x/hetu';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { sleep } from 'k6';

const PLAN = JSON.parse(__ENV.BENCHRUN_PLAN || 'null');
const TARGET = JSON.parse(__ENV.BENCHRUN_TARGET || '{}');
if (!PLAN || !Array.isArray(PLAN.scenarios) || PLAN.scenarios.length === 0) {
  throw new Error('benchrun.js: BENCHRUN_PLAN is not set or has no scenario (it is written by benchrun / the operator)');
}
const RUNNER_INDEX = parseInt(__ENV.BENCHRUN_RUNNER_INDEX || '0', 10);
const CREDS = {
  redisUser: __ENV.BENCHRUN_REDIS_USERNAME || '',
  redisPassword: __ENV.BENCHRUN_REDIS_PASSWORD || '',
  redisTLSCA: __ENV.BENCHRUN_REDIS_TLS_CA || '',
  hetuKey: __ENV.BENCHRUN_HETU_AUTHKEY || '',
  tlsCA: __ENV.BENCHRUN_TLS_CA || '',
};

/**
 * The exported function (k6 exec) running a scenario: a script scenario's custom_<i>, else its
 * type with dots as underscores (tcp.echo: tcp_echo).
 */
function execOf(s) {
  return s.exec || s.type.replace(/\./g, '_');
}

const BY_NAME = {};
const scenarios = {};
for (const s of PLAN.scenarios) {
  // A script scenario runs custom_<i> of the entry module internal/plan generates around this
  // file; its params become the scenario's environment variables.
  const custom = s.type === 'script';
  if (custom ? !s.exec : !s.address) {
    throw new Error(`benchrun.js: scenario "${s.name}": unsupported type "${s.type}"`);
  }
  const t = TARGET[s.address]; // the address its type's descriptor names (internal/workload)
  if (!custom && !(t && t.addrs && t.addrs.length)) {
    throw new Error(`benchrun.js: scenario "${s.name}" (${s.type}) has no target address in BENCHRUN_TARGET`);
  }
  BY_NAME[s.name] = s;
  scenarios[s.name] = {
    executor: 'constant-vus',
    vus: s.vus,
    duration: `${s.durationMs}ms`,
    startTime: `${s.startMs}ms`,
    gracefulStop: `${PLAN.graceMs}ms`,
    exec: execOf(s),
  };
  if (!custom && s.requests !== undefined && s.requests !== null) {
    // A fixed count: enough iterations for the runner's share in batches (every VU needs
    // one); each takes its calls from a budget the VUs share (benchrun.take), so the calls
    // add up to the share exactly. The scenario's duration is its time limit.
    const iterations = Math.max(Math.ceil(s.requests / batchOf(s)), s.vus);
    scenarios[s.name] = {
      executor: 'shared-iterations',
      vus: s.vus,
      iterations,
      maxDuration: `${s.durationMs}ms`,
      startTime: `${s.startMs}ms`,
      gracefulStop: `${PLAN.graceMs}ms`,
      exec: execOf(s),
    };
  }
  if (!custom && s.arrival) {
    // An open model: one VU runs the whole schedule in Go (client.open), where maxVUs
    // workers send the calls at their intended times on their own connections.
    scenarios[s.name] = {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: 1,
      maxDuration: `${s.durationMs}ms`,
      startTime: `${s.startMs}ms`,
      gracefulStop: `${PLAN.graceMs}ms`,
      exec: 'open_loop',
    };
  }
  if (custom && s.params) {
    scenarios[s.name].env = s.params;
  }
  if (!custom) {
    benchrun.scenarioInfo(s.name, scenarioInfo(s));
  }
}
addServerCountProbes(scenarios);

export const options = {
  scenarios,
  setupTimeout: '300s',
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'max'],
};

const calls = new Counter('benchrun_calls');

/** Picks this VU's address from a list (VUs spread round-robin). */
function pick(list) {
  return list[(Math.max(__VU, 1) - 1) % list.length];
}

/** Default calls per k6 iteration of a scenario type. */
function defaultBatch(s) {
  if (s.type === 'redis.upsert') return 20;
  if (s.type.startsWith('hetu.')) return 10;
  return 100;
}

/** Calls per k6 iteration of scenario s (param batch, else the type's default). */
function batchOf(s) {
  return intParam(s, 'batch', defaultBatch(s));
}

/**
 * Calls this iteration makes: the batch, or for a fixed-count scenario what is left of the
 * runner's share (0 once it is spent).
 */
function callsNow(s) {
  const n = batchOf(s);
  if (s.requests === undefined || s.requests === null) return n;
  return benchrun.take(s.name, n, s.requests);
}

/** What the result document says about scenario s: its command(s) and payload size. */
function scenarioInfo(s) {
  const body = s.bodySize > 0 ? s.bodySize : 0;
  switch (s.type) {
    case 'redis.get':
    case 'redis.set':
      return { command: s.type.slice(6), bodySize: body || 3 };
    case 'redis.ping':
      return { command: 'ping', bodySize: 0 };
    case 'redis.command':
      return { type: 'redis.command', command: (s.command[0] || '').toLowerCase(), bodySize: s.dataSize || 3 };
    case 'ycsb':
      return { command: 'hgetall,hset', bodySize: 10 * (body || 100) };
    case 'grpc':
      return { command: (s.grpc || {}).method || '', keepCase: true, bodySize: body };
    default:
      return {};
  }
}

/** Returns param name of scenario s as an integer, or def. */
function intParam(s, name, def) {
  const v = parseInt((s.params || {})[name], 10);
  return Number.isNaN(v) || v < 1 ? def : v;
}

function param(s, name) {
  return String((s.params || {})[name] || '').toLowerCase();
}

/** The plan scenario the VU is running. */
function current() {
  return BY_NAME[exec.scenario.name];
}

// ---- Redis ------------------------------------------------------------------------------

// Key prefix of a scenario's GET/SET keys: its own, so scenarios with other body sizes do not
// change what it reads.
const keyPrefix = (s) => `benchrun:${s.name}:`;
const body = (s) => 'x'.repeat(s.bodySize > 0 ? s.bodySize : 3); // redis-benchmark's default

function newRedis(addr, s) {
  return benchrun.redis({
    addr,
    username: CREDS.redisUser,
    password: CREDS.redisPassword,
    tls: !!(TARGET.redis && TARGET.redis.tls),
    tlsServerName: (TARGET.redis && TARGET.redis.tlsServerName) || '',
    tlsInsecure: !!(TARGET.redis && TARGET.redis.tlsInsecure),
    tlsCA: CREDS.redisTLSCA,
    keyspace: s ? s.keySpace : 0,
    dataSize: s && s.dataSize ? s.dataSize : 0,
    prefix: 'benchrun:',
  });
}

// One client per VU for the scenario it is running: the keyspace is per client. The client
// of the previous scenario is closed when the VU moves on.
let vuClient = null;
let vuClientScenario = '';

function client(s, read) {
  if (vuClientScenario !== s.name) {
    if (vuClient !== null) vuClient.close();
    const r = TARGET.redis;
    const addrs = read && r.readAddrs && r.readAddrs.length ? r.readAddrs : r.addrs;
    vuClient = newRedis(pick(addrs), s);
    vuClientScenario = s.name;
  }
  return vuClient;
}

function padKey(n) {
  return String(n).padStart(12, '0');
}

/** Writes keys 0..keySpace-1 of a redis.get scenario (MSET in chunks), then waits for replicas. */
function prefillGet(s) {
  const c = newRedis(TARGET.redis.addrs[0], null);
  const value = body(s);
  const chunk = 500;
  for (let first = 0; first < s.keySpace; first += chunk) {
    const args = ['MSET'];
    for (let n = first; n < Math.min(first + chunk, s.keySpace); n++) {
      args.push(keyPrefix(s) + padKey(n), value);
    }
    c.command(...args);
  }
  const replicas = (TARGET.redis.readAddrs || []).length;
  if (replicas > 0) {
    c.command('WAIT', String(replicas), '10000');
  }
  c.close();
}

// Creates upsert rows 1..keySpace (id = number) and their index entries with server-side
// Lua in chunks, only when the index is empty (so rows inserted earlier are never duplicated).
const UPSERT_PREFILL = `
local prefix, first, last, check = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local idx = prefix .. 'idx:number'
if check == '1' and redis.call('ZCARD', idx) > 0 then return 0 end
for i = first, last do
  redis.call('HSET', prefix .. 'row:' .. i, 'id', i, 'number', i, 'name', 'aaa')
  redis.call('ZADD', idx, i, i)
end
redis.call('SET', prefix .. 'seq', last)
return last - first + 1`;

function prefillUpsert(s) {
  const c = newRedis(TARGET.redis.addrs[0], null);
  const chunk = 10000;
  for (let first = 1; first <= s.keySpace; first += chunk) {
    const last = Math.min(first + chunk - 1, s.keySpace);
    const n = c.command('EVAL', UPSERT_PREFILL, '1', 'benchrun:upsert:', String(first), String(last), first === 1 ? '1' : '0');
    if (n === 0) break; // already filled
  }
  c.close();
}

export function redis_get() {
  const s = current();
  const n = callsNow(s);
  if (n > 0) client(s, true).loop(n, 'GET', `${keyPrefix(s)}__rand_int__`);
  calls.add(n);
}

export function redis_set() {
  const s = current();
  const n = callsNow(s);
  if (n > 0) client(s, false).loop(n, 'SET', `${keyPrefix(s)}__rand_int__`, body(s));
  calls.add(n);
}

export function redis_ping() {
  const s = current();
  const n = callsNow(s);
  if (n > 0) client(s, false).loop(n, 'PING');
  calls.add(n);
}

// redis.command: the run's template; __rand_int__ and __data__ are filled in Go per call.
export function redis_command() {
  const s = current();
  const n = callsNow(s);
  if (n > 0) client(s, false).loop(n, ...s.command);
  calls.add(n);
}

export function redis_upsert() {
  const s = current();
  const n = callsNow(s);
  if (n > 0) client(s, false).upsertN(n);
  calls.add(n);
}

/** The command an open-model (arrival) scenario sends, as client.open's template. */
function openArgs(s) {
  switch (s.type) {
    case 'redis.get':
      return ['GET', `${keyPrefix(s)}__rand_int__`];
    case 'redis.set':
      return ['SET', `${keyPrefix(s)}__rand_int__`, body(s)];
    case 'redis.ping':
      return ['PING'];
    default:
      return s.command;
  }
}

/** What every client's open() takes: this runner's schedule, workers and search stop. */
function openOpts(s, addrs) {
  return { segments: s.arrival.segments, maxVUs: s.arrival.maxVUs, stop: s.arrival.stop || null, addrs };
}

/** The RPC and argument templates of an open-model hetu.* scenario (k6x/hetu ArgTemplate). */
function hetuOpenCall(s) {
  switch (s.type) {
    case 'hetu.hello_world':
      return { rpc: 'hello_world', args: [] };
    case 'hetu.get':
      return { rpc: 'just_get', args: ['__rand_int__'] };
    case 'hetu.get_then_update':
      return { rpc: 'upsert', args: ['__rand_int__'] };
    case 'hetu.get2_update2':
      return { rpc: 'exchange_data', args: ["'__rand_str3__'", '__rand_int__'] };
    default:
      return { rpc: s.hetuCall.rpc, args: s.hetuCall.args || [] };
  }
}

/**
 * The open model of the workloads other than Redis commands and tcp.echo: the same client
 * the closed loop makes, whose open() runs the schedule with one connection per worker.
 * Returns the calls made, or -1 when s is not one of them.
 */
function openOther(s) {
  if (s.type.startsWith('hetu.')) {
    const o = Object.assign(openOpts(s, TARGET.hetu.addrs), hetuOpenCall(s), { keySpace: s.keySpace }); // recorded as hetu.<rpc>, as callN does
    return h().open(o).calls;
  }
  if (s.type === 'ycsb') {
    return client(s, false).ycsb(ycsbOptions(s)).open(openOpts(s, TARGET.redis.addrs)).calls;
  }
  const open = OPEN_CLIENT[s.type];
  return open ? openWith(open(s), openOpts(s, TARGET[s.address].addrs)) : -1;
}

// The client of each type whose open model runs on its closed loop's client (its open()).
const OPEN_CLIENT = { http: newHTTP, grpc: newGRPC };

/** Runs c.open(o) and closes c (the workers have their own connections); returns the calls. */
function openWith(c, o) {
  try {
    return c.open(o).calls;
  } finally {
    c.close();
  }
}

// An arrival scenario (s.arrival: this runner's segments and maxVUs): runs until its schedule ends.
export function open_loop() {
  const s = current();
  const n = openOther(s);
  if (n >= 0) {
    calls.add(n);
    return;
  }
  if (s.type === 'tcp.echo') {
    const t = TARGET.tcp;
    const r = benchrun.echo({
      addr: t.addrs[0],
      size: s.bodySize > 0 ? s.bodySize : 1000,
      tls: !!t.tls,
      tlsServerName: t.tlsServerName || '',
      tlsInsecure: !!t.tlsInsecure,
      tlsCA: CREDS.tlsCA,
    }).open(openOpts(s, t.addrs));
    calls.add(r.calls);
    return;
  }
  const read = s.type === 'redis.get';
  const t = TARGET.redis;
  const r = client(s, read).open({
    segments: s.arrival.segments,
    maxVUs: s.arrival.maxVUs,
    stop: s.arrival.stop || null,
    args: openArgs(s),
    type: s.type,
    addrs: read && t.readAddrs && t.readAddrs.length ? t.readAddrs : t.addrs, // workers spread round-robin
  });
  calls.add(r.calls);
}

// ---- YCSB -------------------------------------------------------------------------------

function ycsbOptions(s) {
  const y = s.ycsb || {};
  return {
    recordCount: y.recordCount || s.keySpace,
    readProportion: y.read || 0,
    updateProportion: y.update || 0,
    insertProportion: y.insert || 0,
    readModifyWriteProportion: y.readModifyWrite || 0,
    requestDistribution: y.distribution || 'zipfian',
    fieldLength: s.bodySize > 0 ? s.bodySize : 100,
    prefix: `benchrun:${s.name}:`,
  };
}

// perScenario returns the VU's object in slot ({ name, client }) for scenario s, opening it
// with open() the first time the VU runs s; with closePrevious, the object of the scenario
// the VU ran before is closed first.
function perScenario(slot, s, closePrevious, open) {
  if (slot.name !== s.name) {
    if (closePrevious && slot.client !== null) slot.client.close();
    slot.client = open();
    slot.name = s.name;
  }
  return slot.client;
}

// One YCSB workload per VU for the scenario it is running.
const vuWorkload = { name: '', client: null };

export function ycsb() {
  const s = current();
  const w = perScenario(vuWorkload, s, false, () => client(s, false).ycsb(ycsbOptions(s)));
  const n = callsNow(s);
  if (n > 0) w.run(n);
  calls.add(n);
}

// ---- TCP echo ---------------------------------------------------------------------------

// One echo connection per VU for the scenario it is running (message size and pipeline are
// per scenario); the previous scenario's is closed when the VU moves on.
const vuEcho = { name: '', client: null };

export function tcp_echo() {
  const s = current();
  const echo = perScenario(vuEcho, s, true, () => {
    const t = TARGET.tcp;
    return benchrun.echo({
      addr: pick(t.addrs),
      size: s.bodySize > 0 ? s.bodySize : 1000, // the seeds' 0.98 KiB messages
      pipeline: s.pipeline > 0 ? s.pipeline : 1,
      tls: !!t.tls,
      tlsServerName: t.tlsServerName || '',
      tlsInsecure: !!t.tlsInsecure,
      tlsCA: CREDS.tlsCA,
    });
  });
  const n = intParam(s, 'batch', 100);
  echo.loop(n);
  calls.add(n);
}

// ---- HTTP -------------------------------------------------------------------------------

// One HTTP client per VU for the scenario it is running (request per scenario).
const vuHTTP = { name: '', client: null };

export function http() {
  const s = current();
  const hc = perScenario(vuHTTP, s, true, () => newHTTP(s));
  const n = intParam(s, 'batch', 20);
  hc.loop(n);
  calls.add(n);
}

/** An HTTP client for scenario s (to this VU's address). */
function newHTTP(s) {
  const t = TARGET.http;
  const r = s.http || {};
  return benchrun.http({
    addr: pick(t.addrs),
    method: r.method || 'GET',
    path: r.path || '/',
    headers: r.headers || {},
    bodySize: s.bodySize > 0 ? s.bodySize : 0,
    keepAlive: r.keepAlive !== false,
    h2c: r.protocol === 'h2c',
    tls: !!t.tls,
    tlsServerName: t.tlsServerName || '',
    tlsInsecure: !!t.tlsInsecure,
    tlsCA: CREDS.tlsCA,
  });
}

// ---- gRPC -------------------------------------------------------------------------------

// One gRPC client (one HTTP/2 connection) per VU for the scenario it is running; the request
// type comes from the server's reflection service, asked once per runner and call.
const vuGRPC = { name: '', client: null };

export function grpc() {
  const s = current();
  const gc = perScenario(vuGRPC, s, true, () => newGRPC(s));
  const n = callsNow(s);
  if (n > 0) gc.loop(n);
  calls.add(n);
}

/** A gRPC client for scenario s (to this VU's address). */
function newGRPC(s) {
  const t = TARGET.grpc;
  const g = s.grpc || {};
  return benchrun.grpc({
    addr: pick(t.addrs),
    method: g.method,
    request: g.request || '',
    bodyField: g.bodyField || '',
    bodySize: s.bodySize > 0 ? s.bodySize : 0,
    metadata: g.metadata || {},
    tls: !!t.tls,
    tlsServerName: t.tlsServerName || '',
    tlsInsecure: !!t.tlsInsecure,
    tlsCA: CREDS.tlsCA,
  });
}

// ---- HeTu -------------------------------------------------------------------------------

const NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function hetuOptions() {
  return { instance: TARGET.hetu.instance || 'bench', layers: TARGET.hetu.layers || 'full', authKey: CREDS.hetuKey };
}

let conn = null;

// The VU's HeTu connection, opened on first use (connect is synchronous, from VU code).
function h() {
  if (conn === null) {
    conn = hetu.connect(pick(TARGET.hetu.addrs), hetuOptions());
  }
  return conn;
}

function rnd3() {
  let out = '';
  for (let i = 0; i < 3; i++) {
    out += NAME_CHARS[benchrun.randint(0, NAME_CHARS.length - 1)];
  }
  return out;
}

function hetuLoop(rpc, argsFn) {
  const s = current();
  const n = callsNow(s);
  if (n === 0) {
    return;
  }
  if (argsFn) {
    h().callN(rpc, n, () => argsFn(s));
  } else {
    h().callN(rpc, n);
  }
  calls.add(n);
}

export function hetu_hello_world() {
  hetuLoop('hello_world');
}

export function hetu_get() {
  hetuLoop('just_get', (s) => [benchrun.randint(1, s.keySpace)]);
}

export function hetu_get_then_update() {
  hetuLoop('upsert', (s) => [benchrun.randint(1, s.keySpace)]);
}

export function hetu_get2_update2() {
  hetuLoop('exchange_data', (s) => [rnd3(), benchrun.randint(1, s.keySpace)]);
}

// hetu.call: the user's RPC with argument templates (api HeTuCallSpec): __rand_int__ is a
// random integer in [1, keySpace], __rand_str__ 8 random letters and digits, new every call;
// a result that is a decimal integer goes as a number, anything else as a string; '...' in
// single quotes is always a string.
export function hetu_call() {
  const c = current().hetuCall;
  hetuLoop(c.rpc, (s) => (c.args || []).map((a) => hetuArg(a, s)));
}

function hetuArg(tmpl, s) {
  if (tmpl.length >= 2 && tmpl[0] === "'" && tmpl[tmpl.length - 1] === "'") {
    return expandArg(tmpl.slice(1, -1), s);
  }
  const v = expandArg(tmpl, s);
  return /^-?[0-9]{1,15}$/.test(v) ? parseInt(v, 10) : v;
}

function expandArg(tmpl, s) {
  if (tmpl.indexOf('__rand_') < 0) return tmpl;
  return tmpl
    .replace(/__rand_int__/g, () => String(benchrun.randint(1, s.keySpace)))
    .replace(/__rand_str__/g, () => {
      let out = '';
      for (let i = 0; i < 8; i++) out += NAME_CHARS[benchrun.randint(0, NAME_CHARS.length - 1)];
      return out;
    });
}

// ---- server-side counts -----------------------------------------------------------------
// Runner 0 reads the target's INFO commandstats before and after every Redis scenario (in
// setup(), then in a one-iteration probe scenario half a grace after each scenario's planned
// end, so runners whose clocks are less than that apart are all counted); the result document gets the difference as serverCalls, shown beside
// benchrun's own count (the packetd table's PROTO/METRICS and PROTO/PERCENT). Off with the
// scenario param serverCounts: "false". A target that refuses INFO (some proxies) gives none.


/** Whether server-side counts are taken around scenario s (by runner 0). */
function countable(s) {
  return !!s && !!(TARGET.redis && TARGET.redis.addrs && TARGET.redis.addrs.length)
    && (s.type.startsWith('redis.') || s.type === 'ycsb') && param(s, 'serverCounts') !== 'false';
}

/** Whether this runner takes server-side counts around scenario s: runner 0 does. */
function counted(s) {
  return RUNNER_INDEX === 0 && countable(s);
}

/** The addresses scenario s sends its calls to. */
function serverAddrs(s) {
  const r = TARGET.redis;
  return s.type === 'redis.get' && r.readAddrs && r.readAddrs.length ? r.readAddrs : r.addrs;
}

/** The target's command counts summed over scenario s's addresses; null (warned) when unreadable. */
function readCounts(s, quiet) {
  const total = {};
  try {
    for (const addr of serverAddrs(s)) {
      const c = newRedis(addr, null);
      try {
        const m = c.commandStats();
        for (const k of Object.keys(m)) total[k] = (total[k] || 0) + m[k];
      } finally {
        c.close();
      }
    }
  } catch (e) {
    if (!quiet) console.warn(`benchrun: no server-side counts for scenario ${s.name}: ${e}`);
    return null;
  }
  return total;
}

/**
 * Notes the target's command counts at the start ("before") or end ("after") of scenario s;
 * returns them (null when not counted or unreadable).
 */
function markCounts(s, when) {
  if (!counted(s)) return null;
  const total = readCounts(s, false);
  if (total) benchrun.serverCounts(s.name, when, total);
  return total;
}

/**
 * Whether runner 0 ends fixed-count scenario s's server counts as soon as the target served
 * its calls (all runners' share: totalRequests), rather than at its planned end: a Redis
 * scenario with one known command per call.
 */
function waitsForCount(s) {
  return counted(s) && s.totalRequests > 0 && commandsOf(s).length > 0 && s.type !== 'redis.upsert';
}

/** The commands (lower case) scenario s's calls send, as the server counts them. */
function commandsOf(s) {
  return (scenarioInfo(s).command || '').split(',').filter((c) => c !== '');
}

/** How many of cmds the target served between counts a and b. */
function served(a, b, cmds) {
  let n = 0;
  for (const c of cmds) n += (b[c] || 0) - (a[c] || 0);
  return n;
}

/**
 * Adds runner 0's probe scenario half a grace after each Redis scenario's planned end (for a
 * fixed-count scenario too: other runners may still be making their share). Its name has
 * upper-case letters, which a BenchmarkRun's scenario names cannot.
 */
function addServerCountProbes(out) {
  const n = PLAN.scenarios.length;
  for (let i = 1; i <= n; i++) {
    const prev = PLAN.scenarios[i - 1];
    let env = { BENCHRUN_COUNTS_AT: String(i) };
    if (waitsForCount(prev)) {
      // A fixed count: its "after" counts are taken once the target served every runner's
      // calls (or at the planned end, whichever is first), so runner 0's k6 ends with the
      // scenario instead of waiting out its duration; a scenario after it keeps its start.
      const lead = Math.min(prev.startMs, 100); // its own "before" read, just before the start
      out[`BenchrunDone_${i}`] = {
        executor: 'per-vu-iterations',
        vus: 1,
        iterations: 1,
        maxDuration: `${lead + prev.durationMs + PLAN.graceMs}ms`,
        startTime: `${prev.startMs - lead}ms`,
        exec: 'benchrun_done',
        env: { BENCHRUN_COUNTS_AT: String(i), BENCHRUN_COUNTS_LEAD: String(lead) },
      };
      if (!counted(PLAN.scenarios[i])) continue;
      env = { BENCHRUN_COUNTS_AT: String(i), BENCHRUN_COUNTS_BEFORE_ONLY: '1' };
    }
    if (!(counted(prev) || counted(PLAN.scenarios[i]))) continue;
    out[`BenchrunCounts_${i}`] = {
      executor: 'per-vu-iterations',
      vus: 1,
      iterations: 1,
      maxDuration: `${PLAN.graceMs}ms`,
      startTime: `${prev.startMs + prev.durationMs + Math.floor(PLAN.graceMs / 2)}ms`,
      exec: 'benchrun_counts',
      env,
    };
  }
}

/** The probe after scenario i-1 (unless a fixed count's benchrun_done took it) and before scenario i, if any. */
export function benchrun_counts() {
  const i = parseInt(__ENV.BENCHRUN_COUNTS_AT, 10);
  if (!__ENV.BENCHRUN_COUNTS_BEFORE_ONLY) markCounts(PLAN.scenarios[i - 1], 'after');
  markCounts(PLAN.scenarios[i], 'before');
}

/**
 * The "after" counts of fixed-count scenario i-1, taken as soon as the target served its
 * totalRequests calls since it began (polled every 100 ms), at the latest half a grace after
 * its planned end. Its "before" counts are setup()'s for a scenario starting the run, else
 * read here just before it starts.
 */
export function benchrun_done(data) {
  const i = parseInt(__ENV.BENCHRUN_COUNTS_AT, 10);
  const lead = parseInt(__ENV.BENCHRUN_COUNTS_LEAD, 10);
  const s = PLAN.scenarios[i - 1];
  const deadline = Date.now() + lead + s.durationMs + Math.floor(PLAN.graceMs / 2);
  const base = lead > 0 ? readCounts(s, true) : data && data.before0;
  const cmds = commandsOf(s);
  while (Date.now() < deadline) {
    const now = base ? readCounts(s, true) : null;
    if (now && served(base, now, cmds) >= s.totalRequests) break;
    sleep(0.1);
  }
  markCounts(s, 'after');
}

export function teardown() {
  if (SOLE_LOADER && RUNNER_INDEX === 0) {
    // every runner saw the marker before its first scenario
    const c = newRedis(TARGET.redis.addrs[0], null);
    c.command('DEL', LOADED_KEY);
    c.close();
  }
}

// ---- setup ------------------------------------------------------------------------------

// With server-side counts and several runners, runner 0 alone writes the Redis data the
// scenarios need (YCSB records, redis.get/upsert prefill) and then sets LOADED_KEY; the other
// runners wait for it, so no runner's loading lands inside a scenario's commandstats window.
const RUNNER_COUNT = parseInt(__ENV.BENCHRUN_RUNNER_COUNT || '1', 10);
const LOADED_KEY = `benchrun:loaded:${(__ENV.BENCHRUN_RUNNER || 'run').replace(/-[0-9]+$/, '')}`;
const SOLE_LOADER = RUNNER_COUNT > 1 && PLAN.scenarios.some(countable);

function redisLoads(s) {
  if (s.type === 'redis.get' && param(s, 'prefill') !== 'false') {
    prefillGet(s);
  } else if (s.type === 'redis.upsert' && param(s, 'prefill') !== 'false') {
    prefillUpsert(s);
  } else if (s.type === 'ycsb') {
    const c = newRedis(TARGET.redis.addrs[0], s);
    const o = ycsbOptions(s);
    c.ycsb(o).load(0, o.recordCount);
    c.close();
  }
}

/** Runners other than 0 wait (up to 280 s, within setupTimeout) for runner 0's LOADED_KEY. */
function waitForLoader() {
  const c = newRedis(TARGET.redis.addrs[0], null);
  try {
    for (let i = 0; c.command('EXISTS', LOADED_KEY) !== 1; i++) {
      if (i === 14000) {
        console.warn('benchrun: runner 0 has not loaded the scenarios\' data after 280 s; starting anyway');
        break;
      }
      sleep(0.02);
    }
  } finally {
    c.close();
  }
}

export function setup() {
  let seeded = 0;
  if (SOLE_LOADER && RUNNER_INDEX !== 0) {
    waitForLoader();
  } else if (SOLE_LOADER) {
    const c = newRedis(TARGET.redis.addrs[0], null);
    c.command('DEL', LOADED_KEY); // a previous run's marker
    c.close();
  }
  for (const s of PLAN.scenarios) {
    if (s.type === 'redis.get' || s.type === 'redis.upsert' || s.type === 'ycsb') {
      if (!SOLE_LOADER || RUNNER_INDEX === 0) redisLoads(s);
    } else if (s.type.startsWith('hetu.') && param(s, 'seed') === 'true' && s.keySpace > seeded) {
      const c = hetu.connect(TARGET.hetu.addrs[0], hetuOptions());
      for (let first = seeded + 1; first <= s.keySpace; first += 1000) {
        c.call('seed', first, Math.min(1000, s.keySpace - first + 1));
      }
      c.close();
      seeded = s.keySpace;
    }
  }
  const before0 = markCounts(PLAN.scenarios[0], 'before');
  if (SOLE_LOADER && RUNNER_INDEX === 0) {
    // after the counts: the others start as soon as they see it (PSETEX: a command no
    // scenario of ours sends, though a redis.command one could)
    const c = newRedis(TARGET.redis.addrs[0], null);
    c.command('PSETEX', LOADED_KEY, '3600000', '1');
    c.close();
  }
  return { before0 }; // benchrun_done's baseline for a fixed count starting the run
}
