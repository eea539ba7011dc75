import { Counter, Gauge, Histogram, type LabelValues, type Registry } from 'prom-client';

/** Labelled values a metric reads at scrape time: one row per label set. */
export type MetricRows<L extends string> = Iterable<readonly [LabelValues<L>, number]>;

/**
 * Metric constructors bound to one registry, so a service's metrics class says only name, help and
 * labels. The `sampled` and `tally` kinds read their value at scrape time: the hot path keeps plain
 * numbers, and what is exported can never drift from what it reads.
 */
export interface MetricBuilders {
  counter<L extends string = string>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  histogram<L extends string = string>(name: string, help: string, buckets: readonly number[], labelNames?: readonly L[]): Histogram<L>;
  /** A gauge set to `read()` at each scrape. */
  sampled(name: string, help: string, read: () => number): Gauge;
  /** A gauge holding exactly the rows `rows()` gives at each scrape (a label set it stops giving is dropped). */
  sampledBy<L extends string>(name: string, help: string, labelNames: readonly L[], rows: () => MetricRows<L>): Gauge<L>;
  /** A counter mirroring a monotonic tally kept elsewhere (`read()`: its total since start). */
  tally(name: string, help: string, read: () => number): Counter;
  /** {@link tally} per label set. */
  tallyBy<L extends string>(name: string, help: string, labelNames: readonly L[], rows: () => MetricRows<L>): Counter<L>;
}

export function metricBuilders(registry: Registry): MetricBuilders {
  const registers = [registry];
  /** Options that refill a metric from `rows()` at each scrape; `put` sets (a gauge) or adds (a counter) one row. */
  const fromRows = <L extends string, M extends Gauge<L> | Counter<L>>(
    labelNames: readonly L[],
    rows: () => MetricRows<L>,
    put: (metric: M, labels: LabelValues<L>, value: number) => void,
  ) => ({
    labelNames,
    registers,
    collect(this: M) {
      this.reset();
      for (const [labels, value] of rows()) put(this, labels, value);
    },
  });
  const sampledBy: MetricBuilders['sampledBy'] = (name, help, labelNames, rows) =>
    new Gauge({ name, help, ...fromRows(labelNames, rows, (g: Gauge, labels, v) => g.set(labels, v)) });
  const tallyBy: MetricBuilders['tallyBy'] = (name, help, labelNames, rows) =>
    new Counter({ name, help, ...fromRows(labelNames, rows, (c: Counter, labels, v) => c.inc(labels, v)) });
  return {
    counter: (name, help, labelNames = []) => new Counter({ name, help, labelNames, registers }),
    histogram: (name, help, buckets, labelNames = []) => new Histogram({ name, help, labelNames, buckets: [...buckets], registers }),
    sampled: (name, help, read) => sampledBy(name, help, [], () => [[{}, read()]]),
    sampledBy,
    tally: (name, help, read) => tallyBy(name, help, [], () => [[{}, read()]]),
    tallyBy,
  };
}
