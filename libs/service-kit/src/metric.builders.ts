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
  return {
    counter: (name, help, labelNames = []) => new Counter({ name, help, labelNames, registers }),
    histogram: (name, help, buckets, labelNames = []) => new Histogram({ name, help, labelNames, buckets: [...buckets], registers }),
    sampled: (name, help, read) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      }),
    sampledBy: (name, help, labelNames, rows) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, v] of rows()) this.set(labels, v);
        },
      }),
    tally: (name, help, read) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      }),
    tallyBy: (name, help, labelNames, rows) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const [labels, v] of rows()) this.inc(labels, v);
        },
      }),
  };
}
