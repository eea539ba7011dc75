// The arithmetic every benchmark shares: seeded randomness, percentiles, rounding and reading
// counters off a Prometheus /metrics page. One definition of each, so that a p99 or a counter
// means the same thing in every results file (they used to differ bench by bench: one counter
// summed the matching series and another returned the first; one percentile took p in percent,
// another as a fraction).

/** Seeded uniform [0, 1) generator (mulberry32): the same seed gives the same workload everywhere. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A log-normal draw with the given median (Box–Muller on two draws of `r`). */
export function lognormal(r, median, sigma) {
  const u = Math.max(1e-9, r());
  const v = r();
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
}

/** An exponential draw with the given mean: the gap between Poisson arrivals. */
export function exponential(r, mean) {
  return -mean * Math.log(1 - r());
}

/** `x` rounded to an integer inside [lo, hi]. */
export const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, Math.round(x)));

const numbers = (xs) => xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((a, b) => a - b);

/**
 * The nearest-rank percentile, `p` in percent (0–100]: the smallest sample with at least p% of
 * the samples at or below it, so p99 of 100 samples is the 99th, not the largest. Missing
 * samples (null, undefined, NaN) are left out; null when none is left.
 */
export function percentile(xs, p) {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile: p must be in (0, 100], got ${p}`);
  const s = numbers(xs);
  if (s.length === 0) return null;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * The quantile `q` in [0, 1] by linear interpolation between the two nearest samples (R's type 7),
 * for calibrations that take a low quantile of few timings. Missing samples are left out; null
 * when none is left.
 */
export function quantile(xs, q) {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile: q must be in [0, 1], got ${q}`);
  const s = numbers(xs);
  if (s.length === 0) return null;
  const x = q * (s.length - 1);
  const i = Math.floor(x);
  return i + 1 < s.length ? s[i] * (1 - (x - i)) + s[i + 1] * (x - i) : s[i];
}

/** The median; the mean of the two middle samples when the count is even. Null when empty. */
export function median(xs) {
  const s = numbers(xs);
  if (s.length === 0) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function mean(xs) {
  const s = numbers(xs);
  return s.length === 0 ? null : s.reduce((a, b) => a + b, 0) / s.length;
}

/** `x` to `d` decimals; null stays null (a missing figure is written as null, never as 0). */
export function round(x, d = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return null;
  return Math.round(x * 10 ** d) / 10 ** d;
}

/** `a / b` rounded, or null when either is missing or b is 0 (no ratio rather than Infinity). */
export function ratio(a, b, d = 2) {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return round(a / b, d);
}

/** Command-line `--name value` (or `--name=value`), else `fallback`. */
export function arg(name, fallback, argv = process.argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === `--${name}` && i + 1 < argv.length) return argv[i + 1];
    if (argv[i].startsWith(`--${name}=`)) return argv[i].slice(name.length + 3);
  }
  return fallback;
}

// ---- Prometheus text format ------------------------------------------------------------------

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/y;

/** Every sample line of a /metrics page as { name, labels, value }; comments and blanks skipped. */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line.trim());
    if (!m) continue;
    const labels = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      let l;
      while (LABEL.lastIndex < m[2].length && (l = LABEL.exec(m[2])))
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    out.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]) });
  }
  return out;
}

const matches = (sample, labels) => Object.entries(labels).every(([k, v]) => sample.labels[k] === String(v));

/**
 * The sum over every series of `name` whose labels include `labels` (exact values; other labels
 * free), as PromQL's `sum(name{...})` would give; 0 when none matches, as a counter that was never
 * incremented reads. `text` is a /metrics page or its parsed samples.
 */
export function counter(text, name, labels = {}) {
  const samples = typeof text === 'string' ? parseMetrics(text) : text;
  let sum = 0;
  for (const s of samples) if (s.name === name && matches(s, labels)) sum += s.value;
  return sum;
}

/**
 * A quantile of a Prometheus histogram summed over the series matching `labels`, linear inside
 * the bucket as histogram_quantile() is; null when it holds no observation.
 */
export function histogramQuantile(text, name, q, labels = {}) {
  const samples = typeof text === 'string' ? parseMetrics(text) : text;
  const byLe = new Map();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !matches(s, labels)) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) ?? 0) + s.value);
  }
  const buckets = [...byLe].sort((a, b) => a[0] - b[0]);
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + (le - prevLe) * ((rank - prevCount) / Math.max(1, count - prevCount));
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

/** A service's /metrics page on loopback. */
export async function scrape(port) {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`GET :${port}/metrics answered ${res.status}`);
  return res.text();
}
