import type { ReusePattern } from './reuse.pattern.js';

/** A profiled pattern as policy sees it: quality against the derived model's own prefill, and cost. */
export interface ProfiledPattern {
  readonly pattern: ReusePattern;
  /** Top-1 agreement with the derived model's own continuation, in [0, 1]. */
  readonly quality: number;
  /** Mean KL of next-token distributions (nats); breaks quality ties. */
  readonly meanKl: number;
  readonly recomputedLayers: number;
  /** Bytes of E cache per token the pattern needs (0 without a transition layer). */
  readonly eCacheBytesPerToken: number;
  /** Measured mean prefill time of the pattern while profiling. */
  readonly prefillMs: number;
  /**
   * Task quality loss: relative increase of the derived model's held-out loss (bits per byte) on
   * its own domain under the pattern, (pattern − own) / own; absent when the profile did not measure it.
   */
  readonly taskLoss?: number;
}

/** A ProfiledPattern's fields as a record carrying them may hold them: the wire's FrontierPoint leaves the pattern optional. */
export type ProfiledPatternFields = Omit<ProfiledPattern, 'pattern' | 'taskLoss'> & {
  readonly pattern?: ReusePattern;
  readonly taskLoss?: number | null;
};

/**
 * A ProfiledPattern copied out of any record with its fields (a FrontierPoint either way over the
 * wire): a missing pattern reads as all zeros, a null taskLoss as not measured. One copy, so the
 * profiler that sends a frontier and the node that reads it agree on every field.
 */
export function profiledPattern(p: ProfiledPatternFields): ProfiledPattern {
  const pattern = p.pattern ?? { r1: 0, u1: 0, r2: 0 };
  return {
    pattern: { r1: pattern.r1, u1: pattern.u1, r2: pattern.r2 },
    quality: p.quality,
    meanKl: p.meanKl,
    recomputedLayers: p.recomputedLayers,
    eCacheBytesPerToken: p.eCacheBytesPerToken,
    prefillMs: p.prefillMs,
    ...(p.taskLoss !== null && p.taskLoss !== undefined ? { taskLoss: p.taskLoss } : {}),
  };
}

/**
 * Which quality a pair's floor is held on: `top1` (default) is 1 − top-1 agreement with the derived
 * model's own prediction at every scored position, the strict guard; `task` is `taskLoss`, the
 * closest analogue here of the DroidSpeak paper's per-task accuracy. An operator sets it per pair.
 */
export type QualityMetric = 'top1' | 'task';
export const QUALITY_METRICS: readonly QualityMetric[] = ['top1', 'task'];

/** A point's loss under `metric`; Infinity for `task` when the profile did not measure it (never within a floor). */
export function qualityLoss(p: ProfiledPattern, metric: QualityMetric = 'top1'): number {
  if (metric === 'top1') return 1 - p.quality;
  return p.taskLoss ?? Infinity;
}

/** Cost order: fewer recomputed layers, then no E cache to ship, then faster measured. */
function cheaper(a: ProfiledPattern, b: ProfiledPattern): number {
  return a.recomputedLayers - b.recomputedLayers || a.eCacheBytesPerToken - b.eCacheBytesPerToken || a.prefillMs - b.prefillMs;
}

/** Quality order under `metric`: lower loss, then lower KL. */
function better(a: ProfiledPattern, b: ProfiledPattern, metric: QualityMetric): boolean {
  const la = qualityLoss(a, metric);
  const lb = qualityLoss(b, metric);
  return la < lb || (la === lb && a.meanKl < b.meanKl);
}

/**
 * The quality/cost Pareto frontier (DroidSpeak §4.4): patterns no other pattern beats on
 * quality (under `metric`) at equal or lower cost. Returned cheapest first, so the loss strictly
 * falls along it; recomputing everything (loss 0, KL 0) always ends it when profiled.
 */
export function paretoFrontier(points: readonly ProfiledPattern[], metric: QualityMetric = 'top1'): ProfiledPattern[] {
  const sorted = [...points].sort((a, b) => cheaper(a, b) || qualityLoss(a, metric) - qualityLoss(b, metric) || a.meanKl - b.meanKl);
  const out: ProfiledPattern[] = [];
  for (const p of sorted) {
    const last = out.at(-1);
    if (!last || better(p, last, metric)) out.push(p);
  }
  return out;
}

/**
 * The frontiers of both metrics in one list, cheapest first: what a profiler stores for a pair,
 * so a plan can be chosen under either metric from it (each metric's own frontier is a subset).
 */
export function bothFrontiers(points: readonly ProfiledPattern[]): ProfiledPattern[] {
  const seen = new Set<ProfiledPattern>();
  for (const m of QUALITY_METRICS) for (const p of paretoFrontier(points, m)) seen.add(p);
  return [...seen].sort((a, b) => cheaper(a, b) || b.quality - a.quality || a.meanKl - b.meanKl);
}
