// HeTu-style backend upsert on plain Redis (no HeTu server): look a row up by its unique
// index, WATCH what was read, commit the update or the insert with MULTI/EXEC, retry on
// conflict. The recorded return value is the number of attempts (1 = no conflict), like the
// seeds' redis_upsert benchmark. Rows live under PREFIX upsert:row:<id>, the index is the
// sorted set PREFIX upsert:idx:number.
//
//   bin/k6 run --out benchrun=result.json scripts/k6/redis_upsert.js
//
// Env: REDIS_ADDR (host:port or comma list), REDIS_PASSWORD, REDIS_DB, KEYSPACE (numbers
// 1..KEYSPACE, default 30000), PREFIX (default "benchrun:"), plus SCENARIOS (redis_upsert),
// DURATION, VUS | WORKERS x TASKS_PER_WORKER, GRACE, BATCH (see lib/common.js).
import benchrun from 'k6/x/benchrun';
import { baseOptions, env, envInt, pickAddr, sequentialScenarios } from './lib/common.js';

export const options = {
  ...baseOptions,
  scenarios: sequentialScenarios(['redis_upsert']),
};

const BATCH = envInt('BATCH', 20);

const client = benchrun.redis({
  addr: pickAddr(env('REDIS_ADDR', '127.0.0.1:6379')),
  password: env('REDIS_PASSWORD', ''),
  db: envInt('REDIS_DB', 0),
  keyspace: envInt('KEYSPACE', 30000),
  prefix: env('PREFIX', 'benchrun:'),
});

export function redis_upsert() {
  client.upsertN(BATCH);
}
