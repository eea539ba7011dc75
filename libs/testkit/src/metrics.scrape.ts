import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/**
 * Prometheus text read by a maintained parser (escaped label values, histograms, timestamps), for
 * benchmarks and integration tests. One parser for every reader: two hand parsers once disagreed
 * on the same /metrics page.
 */
export interface MetricSample {
  readonly labels: Readonly<Record<string, string>>;
  /** Counter, gauge or untyped value; for a histogram or summary its `_count`. */
  readonly value: number;
  /** Histogram buckets by upper bound (`+Inf` last), cumulative counts. */
  readonly buckets?: ReadonlyArray<{ readonly le: number; readonly count: number }>;
  readonly sum?: number;
}

export type MetricFamilies = ReadonlyMap<string, { readonly type: string; readonly samples: readonly MetricSample[] }>;

const num = (s: string | undefined): number => (s === undefined ? NaN : Number(s));
const HISTOGRAM_TYPE = /^# TYPE (\S+) histogram$/gm;
const labelKey = (labels: Record<string, string>): string =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * The package folds a histogram's samples into one only when they carry no labels (every Mnemo
 * service adds `service=…`), so histograms are read with their TYPE line taken out — the package
 * then returns `_bucket`, `_sum` and `_count` as plain families — and are put together here per
 * label set.
 */
export function parseMetrics(text: string): MetricFamilies {
  const histograms = new Set([...text.matchAll(HISTOGRAM_TYPE)].map((m) => m[1]!));
  const plain = new Map<string, { type: string; samples: MetricSample[] }>();
  // The package drops the sample on a last line with no newline after it: end the text with one.
  const body = text.replace(HISTOGRAM_TYPE, '');
  for (const f of parsePrometheusTextFormat(body.endsWith('\n') ? body : `${body}\n`)) {
    const samples = f.metrics.map((m): MetricSample => ({ labels: m.labels ?? {}, value: num(m.value) }));
    const had = plain.get(f.name);
    plain.set(f.name, { type: had?.type ?? f.type, samples: [...(had?.samples ?? []), ...samples] });
  }
  const out = new Map(plain);
  for (const h of histograms) {
    const series = new Map<string, { labels: Record<string, string>; buckets: Array<{ le: number; count: number }> }>();
    for (const b of plain.get(`${h}_bucket`)?.samples ?? []) {
      const { le, ...labels } = b.labels;
      const key = labelKey(labels);
      const s = series.get(key) ?? { labels, buckets: [] };
      s.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: b.value });
      series.set(key, s);
    }
    const byKey = (name: string) => new Map((plain.get(name)?.samples ?? []).map((m) => [labelKey(m.labels), m.value]));
    const counts = byKey(`${h}_count`);
    const sums = byKey(`${h}_sum`);
    const samples = [...series].map(([key, s]): MetricSample => ({
      labels: s.labels,
      value: counts.get(key) ?? NaN,
      buckets: s.buckets.sort((a, b) => a.le - b.le),
      sum: sums.get(key),
    }));
    for (const suffix of ['_bucket', '_count', '_sum']) out.delete(h + suffix);
    out.set(h, { type: 'HISTOGRAM', samples });
  }
  return out;
}

/** A /metrics page as text, or already parsed. */
export type MetricSource = string | MetricFamilies;
const familiesOf = (source: MetricSource): MetricFamilies => (typeof source === 'string' ? parseMetrics(source) : source);
const hasLabels = (sample: MetricSample, labels: Record<string, string>) =>
  Object.entries(labels).every(([k, v]) => sample.labels[k] === String(v));

/** The samples of `name` whose labels include every pair of `labels` (other labels, e.g. service=…, are ignored). */
export function samplesOf(source: MetricSource, name: string, labels: Record<string, string> = {}): MetricSample[] {
  return (familiesOf(source).get(name)?.samples ?? []).filter((s) => hasLabels(s, labels));
}

/**
 * The values `name` reads, one per matching series: a family's samples, or a histogram's parts
 * (`_count`, `_sum`, and `_bucket` with `le` among the labels) as the text format names them.
 */
function valuesOf(families: MetricFamilies, name: string, labels: Record<string, string>): number[] {
  if (families.has(name)) return samplesOf(families, name, labels).map((s) => s.value);
  const part = /^(.*)_(count|sum|bucket)$/.exec(name);
  if (!part || families.get(part[1]!)?.type !== 'HISTOGRAM') return [];
  const { le, ...rest } = labels;
  const series = samplesOf(families, part[1]!, rest);
  if (part[2] === 'count') return series.map((s) => s.value);
  if (part[2] === 'sum') return series.map((s) => s.sum ?? NaN);
  const bound = le === undefined ? undefined : le === '+Inf' ? Infinity : Number(le);
  return series.flatMap((s) => (s.buckets ?? []).filter((b) => bound === undefined || b.le === bound).map((b) => b.count));
}

/** The first matching series' value, or undefined when the family or a matching series is absent. */
export function metricValue(source: MetricSource, name: string, labels: Record<string, string> = {}): number | undefined {
  return valuesOf(familiesOf(source), name, labels)[0];
}

/**
 * The sum over every series of `name` whose labels include `labels`, as PromQL's `sum(name{…})`
 * gives; 0 when none matches, as a counter never incremented reads.
 */
export function counter(source: MetricSource, name: string, labels: Record<string, string> = {}): number {
  return valuesOf(familiesOf(source), name, labels).reduce((s, v) => s + v, 0);
}

/**
 * The upper bound of the bucket holding quantile `q` of one histogram series: undefined when it is
 * empty, Infinity when `q` falls in the +Inf bucket.
 */
export function bucketUpperBound(sample: MetricSample | undefined, q: number): number | undefined {
  const buckets = sample?.buckets;
  if (!buckets || buckets.length === 0) return undefined;
  const total = buckets[buckets.length - 1]!.count;
  if (!(total > 0)) return undefined;
  return buckets.find((b) => b.count >= q * total)?.le;
}

/**
 * Quantile `q` of a histogram summed over the series matching `labels`, linear inside the bucket
 * as histogram_quantile() is (a rank in +Inf answers the last finite bound); null when it holds no
 * observation. Reads an untyped `name_bucket` family too.
 */
export function histogramQuantile(source: MetricSource, name: string, q: number, labels: Record<string, string> = {}): number | null {
  const families = familiesOf(source);
  const byLe = new Map<number, number>();
  const add = (le: number, count: number) => byLe.set(le, (byLe.get(le) ?? 0) + count);
  if (families.get(name)?.type === 'HISTOGRAM') {
    for (const s of samplesOf(families, name, labels)) for (const b of s.buckets ?? []) add(b.le, b.count);
  } else {
    for (const s of samplesOf(families, `${name}_bucket`, labels)) add(s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value);
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

/** GET /metrics of an ops server on loopback, parsed; throws on a network error or a non-2xx. */
export async function scrapeMetrics(port: number, timeoutMs = 5000): Promise<MetricFamilies> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`GET /metrics on port ${port}: HTTP ${res.status}`);
  return parseMetrics(await res.text());
}

const SELECTOR = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$/;

/**
 * The value a selector `name{k="v",…}` reads, as a test writes it: labels it names must match
 * (others are ignored), and a histogram's `_count`, `_sum` and `_bucket{le="…"}` read its parts.
 * Undefined when nothing matches.
 */
export function selectValue(source: MetricSource, selector: string): number | undefined {
  const m = SELECTOR.exec(selector.trim());
  if (!m) throw new RangeError(`not a metric selector: ${selector}`);
  const labels: Record<string, string> = {};
  for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[k!] = v!;
  return metricValue(source, m[1]!, labels);
}

/**
 * What a page declares and what it has samples of: family → kind (lower case, as `# TYPE` writes
 * it), and the series names with at least one sample (a histogram's `_bucket`, `_sum`, `_count`).
 */
export function exposedSeries(source: MetricSource): { types: Map<string, string>; sampled: Set<string> } {
  const types = new Map<string, string>();
  const sampled = new Set<string>();
  for (const [name, f] of familiesOf(source)) {
    types.set(name, f.type.toLowerCase());
    if (f.samples.length === 0) continue;
    if (f.type === 'HISTOGRAM') for (const s of ['_bucket', '_sum', '_count']) sampled.add(name + s);
    else if (f.type === 'SUMMARY') for (const s of ['', '_sum', '_count']) sampled.add(name + s);
    else sampled.add(name);
  }
  return { types, sampled };
}
