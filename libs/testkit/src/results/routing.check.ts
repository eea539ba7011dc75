import { median } from '../figures.js';

/** One pass's TTFT figures of one system, ms (bench/multiround passFigures). */
export interface PassTtft {
  readonly ttft_p50_ms: number;
  readonly ttft_mean_ms: number;
  readonly ttft_p99_ms: number;
}

const STATS = [
  ['p50', 'ttft_p50_ms'],
  ['mean', 'ttft_mean_ms'],
  ['p99', 'ttft_p99_ms'],
] as const;
/** A TTFT statistic the check compares. */
export type RoutingStat = (typeof STATS)[number][0];

export interface RoutingCheck {
  /** `symphony_vs_<other>_ttft_<stat>`: other ÷ symphony, one per pass that ran both, in pass order. */
  readonly per_pass: Record<string, number[]>;
  /** `aa_spread_ttft_<stat>`: |a − b| ÷ mean(a, b) of the first two symphony passes (identical runs); null without two. */
  readonly noise: Record<string, number | null>;
  readonly verdict: {
    /** Every pass's ratio ≥ 1 − the spread of its statistic, and each list's median ≥ 1. */
    readonly never_behind: boolean;
    /** The lists that fail, with why. */
    readonly failing: string[];
  };
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Routing's never-behind check over a benchmark's passes: for each compared system and each of
 * p50, mean and p99, the ratio other ÷ symphony per pass; the noise floor is the relative
 * difference between two identical symphony passes of the same run. Symphony is never behind when
 * every pass's ratio is at least 1 − that spread and the median over the passes is at least 1.
 * No pass is dropped; a system that ran in no pass with symphony fails the check. `stats` narrows
 * the statistics compared (a benchmark whose target names only some of them); all three by default.
 */
export function routingCheck(
  passes: ReadonlyArray<Record<string, PassTtft | undefined>>,
  others: readonly string[],
  stats: readonly RoutingStat[] = ['p50', 'mean', 'p99'],
): RoutingCheck {
  const compared = STATS.filter(([stat]) => stats.includes(stat));
  const sym = passes.map((p) => p.symphony).filter((x): x is PassTtft => x !== undefined);
  const noise: Record<string, number | null> = {};
  for (const [stat, key] of compared) {
    const [a, b] = [sym[0]?.[key], sym[1]?.[key]];
    noise[`aa_spread_ttft_${stat}`] = a !== undefined && b !== undefined && a + b > 0 ? r3(Math.abs(a - b) / ((a + b) / 2)) : null;
  }
  const perPass: Record<string, number[]> = {};
  const failing: string[] = [];
  for (const other of others)
    for (const [stat, key] of compared) {
      const name = `symphony_vs_${other}_ttft_${stat}`;
      const ratios = passes.filter((p) => p.symphony && p[other] && p.symphony[key] > 0).map((p) => r3(p[other]![key] / p.symphony![key]));
      perPass[name] = ratios;
      const floor = 1 - (noise[`aa_spread_ttft_${stat}`] ?? 0);
      const mid = median(ratios);
      if (mid === null) failing.push(`${name}: no pass ran both`);
      else if (mid < 1) failing.push(`${name}: median ${r3(mid)} < 1`);
      else if (ratios.some((x) => x < floor)) failing.push(`${name}: a pass at ${Math.min(...ratios)} < ${r3(floor)} (1 − A-A spread)`);
    }
  return { per_pass: perPass, noise, verdict: { never_behind: failing.length === 0, failing } };
}
