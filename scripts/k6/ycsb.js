// YCSB core workload on Redis hashes (the layout of YCSB's Redis binding: key user<hash>,
// fields field0..fieldN-1), operations chosen and issued in Go. Every operation is timed and
// recorded; the recorded return value is the operation ("read", "update", "insert").
//
//   bin/k6 run --out benchrun=result.json scripts/k6/ycsb.js
//
// Env: REDIS_ADDR (host:port or comma list), REDIS_PASSWORD, REDIS_DB, RECORD_COUNT (default
// 10000), FIELD_COUNT (10), FIELD_LENGTH (100), READ_PROPORTION (0.95), UPDATE_PROPORTION
// (0.05), INSERT_PROPORTION (0), READ_MODIFY_WRITE_PROPORTION (0), DISTRIBUTION (uniform | zipfian | latest; default zipfian),
// PREFIX (default "benchrun:ycsb:"), YCSB_LOAD (1 = load RECORD_COUNT records in setup(),
// default 1), plus SCENARIOS (ycsb), DURATION, VUS | WORKERS x TASKS_PER_WORKER, GRACE, BATCH.
// Several k6 processes against one Redis: give each BENCHRUN_RUNNER_INDEX (0..n-1) and
// BENCHRUN_RUNNER_COUNT (n), so their inserts take disjoint keys (benchrun sets both).
// Workload A = READ_PROPORTION=0.5 UPDATE_PROPORTION=0.5; B = 0.95/0.05 (the default);
// C = READ_PROPORTION=1; D = READ 0.95 INSERT 0.05 DISTRIBUTION=latest; F = READ 0.5
// READ_MODIFY_WRITE 0.5. Each operation also gets its own histogram (the document's operations).
import benchrun from 'k6/x/benchrun';
import { baseOptions, env, envInt, pickAddr, sequentialScenarios } from './lib/common.js';

export const options = {
  ...baseOptions,
  setupTimeout: env('SETUP_TIMEOUT', '10m'),
  scenarios: sequentialScenarios(['ycsb']),
};

const BATCH = envInt('BATCH', 100);
const RECORDS = envInt('RECORD_COUNT', 10000);
const WORKLOAD = {
  recordCount: RECORDS,
  fieldCount: envInt('FIELD_COUNT', 10),
  fieldLength: envInt('FIELD_LENGTH', 100),
  readProportion: parseFloat(env('READ_PROPORTION', '0.95')),
  updateProportion: parseFloat(env('UPDATE_PROPORTION', '0.05')),
  insertProportion: parseFloat(env('INSERT_PROPORTION', '0')),
  readModifyWriteProportion: parseFloat(env('READ_MODIFY_WRITE_PROPORTION', '0')),
  requestDistribution: env('DISTRIBUTION', 'zipfian'),
  prefix: env('PREFIX', 'benchrun:ycsb:'),
};

function client() {
  return benchrun.redis({
    addr: pickAddr(env('REDIS_ADDR', '127.0.0.1:6379')),
    password: env('REDIS_PASSWORD', ''),
    db: envInt('REDIS_DB', 0),
  });
}

const workload = client().ycsb(WORKLOAD);

export function setup() {
  if (env('YCSB_LOAD', '1') === '1') {
    const loader = client();
    loader.ycsb(WORKLOAD).load(0, RECORDS);
    loader.close();
  }
}

export function ycsb() {
  workload.run(BATCH);
}
