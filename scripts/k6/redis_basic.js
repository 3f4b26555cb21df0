// Redis GET / SET / PING (and ECHO) load, one connection per VU, each call timed and recorded in Go.
//
//   bin/k6 run --out benchrun=result.json scripts/k6/redis_basic.js
//
// Env: REDIS_ADDR (host:port, or a comma list spread over VUs; default 127.0.0.1:6379),
// REDIS_PASSWORD, REDIS_DB, BODY_SIZE (SET value bytes, default 3 like redis-benchmark),
// KEYSPACE (keys key:000000000000..; default 100000), plus SCENARIOS (default set,get,ping;
// also echo: ECHO of a BODY_SIZE payload),
// DURATION, VUS | WORKERS x TASKS_PER_WORKER, GRACE, BATCH (see lib/common.js).
import benchrun from 'k6/x/benchrun';
import { baseOptions, env, envInt, pickAddr, sequentialScenarios } from './lib/common.js';

export const options = {
  ...baseOptions,
  scenarios: sequentialScenarios(['set', 'get', 'ping', 'echo'], ['set', 'get', 'ping']),
};

const BATCH = envInt('BATCH', 100);
const BODY = 'x'.repeat(envInt('BODY_SIZE', 3));
const KEY = 'key:__rand_int__';

// One client per VU; it connects on first use.
const client = benchrun.redis({
  addr: pickAddr(env('REDIS_ADDR', '127.0.0.1:6379')),
  password: env('REDIS_PASSWORD', ''),
  db: envInt('REDIS_DB', 0),
  keyspace: envInt('KEYSPACE', 100000),
});

export function set() {
  client.loop(BATCH, 'SET', KEY, BODY);
}

export function get() {
  client.loop(BATCH, 'GET', KEY);
}

export function ping() {
  client.loop(BATCH, 'PING');
}

export function echo() {
  client.loop(BATCH, 'ECHO', BODY);
}
