// HeTu RPC benchmark with the calls and return values of HeTu's published benchmark:
//   hello_world      rpc hello_world()                      -> "世界收到"
//   get              rpc just_get(randint(1, 30000))        -> race retries ("0")
//   get_then_update  rpc upsert(randint(1, 30000))          -> race retries
//   get2_update2     rpc exchange_data(rnd3, randint(1, 30000)) -> race retries
// One WebSocket connection per VU, one outstanding call at a time (replies carry no id).
//
//   bin/k6 run --out benchrun=result.json scripts/k6/hetu_rpc.js
//
// Env: HETU_URL (ws://host:port or host:port, or a comma list spread over VUs; default
// 127.0.0.1:2466), HETU_INSTANCE (default bench), HETU_LAYERS (msgpack | msgpack+zlib |
// msgpack+zlib+crypto = full, the default), HETU_AUTH_KEY, ID_RANGE (default 30000),
// HETU_SEED=1 to create rows 1..ID_RANGE in setup() (app's seed endpoint; SETUP_TIMEOUT,
// default 10m), plus SCENARIOS
// (hello_world,get,get_then_update,get2_update2), DURATION, VUS | WORKERS x TASKS_PER_WORKER,
// GRACE, BATCH (calls per iteration, default 10; see lib/common.js).
import benchrun from 'k6/x/benchrun';
import hetu from 'k6/x/hetu';
import { baseOptions, env, envInt, pickAddr, sequentialScenarios } from './lib/common.js';

export const options = {
  ...baseOptions,
  // Seeding is slow on HeTu (seconds per 1000 rows): give setup() room.
  setupTimeout: env('SETUP_TIMEOUT', '10m'),
  scenarios: sequentialScenarios(['hello_world', 'get', 'get_then_update', 'get2_update2']),
};

const URLS = env('HETU_URL', '127.0.0.1:2466');
const CONN = {
  instance: env('HETU_INSTANCE', 'bench'),
  layers: env('HETU_LAYERS', 'full'),
  authKey: env('HETU_AUTH_KEY', ''),
};
const ID_RANGE = envInt('ID_RANGE', 30000);
const BATCH = envInt('BATCH', 10);
const NAME_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

let conn = null;

// The VU's connection, opened on first use (connect is synchronous, from VU code).
function c() {
  if (conn === null) {
    conn = hetu.connect(pickAddr(URLS), CONN);
  }
  return conn;
}

function rnd3() {
  let s = '';
  for (let i = 0; i < 3; i++) {
    s += NAME_CHARS[benchrun.randint(0, NAME_CHARS.length - 1)];
  }
  return s;
}

const randId = () => benchrun.randint(1, ID_RANGE);

export function setup() {
  if (env('HETU_SEED', '') === '1') {
    const s = hetu.connect(pickAddr(URLS), CONN);
    for (let first = 1; first <= ID_RANGE; first += 1000) {
      s.call('seed', first, Math.min(1000, ID_RANGE - first + 1));
    }
    s.close();
  }
}

export function hello_world() {
  c().callN('hello_world', BATCH);
}

export function get() {
  c().callN('just_get', BATCH, () => [randId()]);
}

export function get_then_update() {
  c().callN('upsert', BATCH, () => [randId()]);
}

export function get2_update2() {
  c().callN('exchange_data', BATCH, () => [rnd3(), randId()]);
}
