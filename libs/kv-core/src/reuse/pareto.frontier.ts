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
}

/** Cost order: fewer recomputed layers, then no E cache to ship, then faster measured. */
function cheaper(a: ProfiledPattern, b: ProfiledPattern): number {
  return a.recomputedLayers - b.recomputedLayers || a.eCacheBytesPerToken - b.eCacheBytesPerToken || a.prefillMs - b.prefillMs;
}

/** Quality order: higher top-1 agreement, then lower KL. */
function better(a: ProfiledPattern, b: ProfiledPattern): boolean {
  return a.quality > b.quality || (a.quality === b.quality && a.meanKl < b.meanKl);
}

/**
 * The quality/cost Pareto frontier (DroidSpeak §4.4): patterns no other pattern beats on
 * quality at equal or lower cost. Returned cheapest first, so quality strictly rises
 * along it; recomputing everything (quality 1, KL 0) always ends it when profiled.
 */
export function paretoFrontier(points: readonly ProfiledPattern[]): ProfiledPattern[] {
  const sorted = [...points].sort((a, b) => cheaper(a, b) || b.quality - a.quality || a.meanKl - b.meanKl);
  const out: ProfiledPattern[] = [];
  for (const p of sorted) {
    const last = out.at(-1);
    if (!last || better(p, last)) out.push(p);
  }
  return out;
}
