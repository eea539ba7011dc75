export function rng(seed: number): () => number;
export function lognormal(r: () => number, median: number, sigma: number): number;
export function exponential(r: () => number, mean: number): number;
export function clamp(x: number, lo: number, hi: number): number;
export function percentile(xs: ReadonlyArray<number | null | undefined>, p: number): number | null;
export function quantile(xs: ReadonlyArray<number | null | undefined>, q: number): number | null;
export function median(xs: ReadonlyArray<number | null | undefined>): number | null;
export function mean(xs: ReadonlyArray<number | null | undefined>): number | null;
export function round(x: number | null | undefined, d?: number): number | null;
export function ratio(a: number | null | undefined, b: number | null | undefined, d?: number): number | null;
export function arg(name: string, fallback: string | undefined, argv?: readonly string[]): string | undefined;
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export function parseMetrics(text: string): MetricSample[];
export function counter(text: string | readonly MetricSample[], name: string, labels?: Record<string, string | number>): number;
export function histogramQuantile(
  text: string | readonly MetricSample[],
  name: string,
  q: number,
  labels?: Record<string, string | number>,
): number | null;
export function scrape(port: number): Promise<string>;
