// Shared parameters of benchrun's k6 scripts, all from environment variables (__ENV), so the
// operator and the CLI can pass a BenchmarkRun's fields:
//
//   SCENARIOS         comma-separated scenario names to run, in this order (default: all of the script's)
//   DURATION          duration of each scenario (default 10s)
//   VUS               virtual users (connections) per scenario; else WORKERS x TASKS_PER_WORKER (default 10)
//   GRACE             graceful stop and gap between scenarios (default 2s)
//   BATCH             calls each iteration makes in a Go loop (default 100; 1 = one call per iteration)
//
// Scenarios run one after another: scenario i starts at i x (DURATION + GRACE).

/** Returns the value of env var name, or def when unset or empty. */
export function env(name, def) {
  const v = __ENV[name];
  return v === undefined || v === '' ? def : v;
}

/** Returns env var name as an integer, or def. */
export function envInt(name, def) {
  const v = parseInt(env(name, ''), 10);
  return Number.isNaN(v) ? def : v;
}

/** Parses a k6 duration ("10s", "1m30s", "500ms", "2h") into seconds. */
export function seconds(d) {
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let m;
  let matched = '';
  while ((m = re.exec(d)) !== null) {
    const n = parseFloat(m[1]);
    total += m[2] === 'ms' ? n / 1000 : m[2] === 's' ? n : m[2] === 'm' ? n * 60 : n * 3600;
    matched += m[0];
  }
  if (matched !== d) {
    throw new Error(`bad duration "${d}"`);
  }
  return total;
}

/** Number of VUs: VUS, else WORKERS x TASKS_PER_WORKER, else 10. */
export function vus() {
  const v = envInt('VUS', 0);
  if (v > 0) return v;
  const w = envInt('WORKERS', 0);
  const t = envInt('TASKS_PER_WORKER', 0);
  if (w > 0 && t > 0) return w * t;
  return 10;
}

/**
 * Builds the k6 scenarios object: one constant-vus scenario per selected name (exec = the
 * exported function of that name), started one after another. all lists the script's
 * scenarios, defaults those run when SCENARIOS is unset (default: all).
 */
export function sequentialScenarios(all, defaults = all) {
  const names = env('SCENARIOS', defaults.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const n of names) {
    if (!all.includes(n)) {
      throw new Error(`unknown scenario "${n}"; this script has: ${all.join(', ')}`);
    }
  }
  const duration = env('DURATION', '10s');
  const grace = env('GRACE', '2s');
  const step = seconds(duration) + seconds(grace);
  const out = {};
  names.forEach((n, i) => {
    out[n] = {
      executor: 'constant-vus',
      vus: vus(),
      duration,
      gracefulStop: grace,
      startTime: `${Math.round(i * step * 1000)}ms`,
      exec: n,
    };
  });
  return out;
}

/** Picks this VU's target from a comma-separated list (VUs spread round-robin). */
export function pickAddr(list) {
  const addrs = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return addrs[(Math.max(__VU, 1) - 1) % addrs.length];
}

/** Options shared by the scripts: no per-request k6 metrics beyond the defaults. */
export const baseOptions = {
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'max'],
};
