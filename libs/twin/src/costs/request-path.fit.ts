import { CHUNK_TOKENS, quantile } from '@mnemo/kv-core';

/** A size's low quantile, less the export of the whole chunks its prompt wrote (ms), at 1,000s of tokens. */
export interface PathPoint {
  readonly ktokens: number;
  readonly ms: number;
}

/**
 * The node's own time for a prefill with nothing to compute, as a base and a per-1,000-token term:
 * a least-squares line through each size's low quantile (the 25th: delays from other work only
 * add), less the export of the whole chunks the prompt wrote, which the twin charges on its own
 * (`exportMsPerChunk`). The calibration (tools/twin/request-path.mjs) measures the samples.
 */
export function nodePathFit(
  samplesBySize: Readonly<Record<number | string, readonly number[]>>,
  exportMsPerChunk: number,
  low = 0.25,
): { baseMs: number; msPerKToken: number; points: PathPoint[] } {
  const points = Object.entries(samplesBySize).map(([size, xs]) => {
    const tokens = Number(size);
    return { ktokens: tokens / 1000, ms: (quantile(xs, low) ?? 0) - Math.floor(tokens / CHUNK_TOKENS) * exportMsPerChunk };
  });
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.ktokens, 0) / n;
  const my = points.reduce((a, p) => a + p.ms, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.ktokens - mx) ** 2, 0);
  const slope = sxx > 0 ? Math.max(0, points.reduce((a, p) => a + (p.ktokens - mx) * (p.ms - my), 0) / sxx) : 0;
  return { baseMs: Math.max(0, my - slope * mx), msPerKToken: slope, points };
}

/**
 * The node's own time per decode step of one sequence with nothing to compute: the low quantile
 * of the client's time per output token at zero cost, less the event-loop turn the twin adds after
 * every iteration on its own (`loopTurnMs`, its median).
 */
export function nodeDecodePath(tpotSamples: readonly number[], loopTurnSamples: readonly number[], low = 0.25): number {
  return Math.max(0, (quantile(tpotSamples, low) ?? 0) - (quantile(loopTurnSamples, 0.5) ?? 0));
}
