import type { ReusePattern } from './reuse.pattern.js';

/**
 * The profiling grid of DroidSpeak §4.3 in the general three-integer form, without
 * duplicates: every (r1, u1, r2) with 0 ≤ r1 ≤ u1 ≤ r2 ≤ L, except
 * - an empty reuse band with r1 > 0 ((r1, r1, r2) computes exactly what (0, 0, r2) does), and
 * - a reuse band with nothing recomputed after it (r1 < u1 = r2): below L it loads an E
 *   cache only to carry one token, and (r1, L, L) is (0, 0, r1) spelled differently.
 * Ordered by r1, then u1, then r2, so a resumed job can skip a prefix.
 */
export function patternGrid(layers: number): ReusePattern[] {
  if (!Number.isInteger(layers) || layers < 1) throw new RangeError(`layers must be a positive integer, got ${layers}`);
  const out: ReusePattern[] = [];
  for (let r1 = 0; r1 <= layers; r1++) {
    for (let u1 = r1; u1 <= layers; u1++) {
      for (let r2 = u1; r2 <= layers; r2++) {
        if (u1 === r1 && r1 > 0) continue;
        if (r1 < u1 && u1 === r2) continue;
        out.push({ r1, u1, r2 });
      }
    }
  }
  return out;
}

/** Stable text key of a pattern, `r1-u1-r2` (database rows, SVG cells, cache keys). */
export function patternKey(p: ReusePattern): string {
  return `${p.r1}-${p.u1}-${p.r2}`;
}
