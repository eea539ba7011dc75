import { planReuse, type ReusePattern } from './reuse.pattern.js';

/**
 * The pattern a node runs for a profiled plan when the base's E caches are not at hand (the
 * KV store keeps KV only). A pattern with a transition layer u1 restarts the recompute band
 * from the base's hidden state there; without it, the band is widened down to layer 0:
 * (r1, u1, r2) → (0, 0, r2). That recomputes every layer the plan recomputed plus the reused
 * band below it with the derived model's own weights, and reuses the same top layers [r2, L),
 * so it is never less faithful than the profiled plan, only slower. Patterns without a
 * transition layer are kept as they are.
 */
export function withoutTransition(p: ReusePattern, layers: number): ReusePattern {
  return planReuse(p, layers).eLayer === null ? { r1: p.r1, u1: p.u1, r2: p.r2 } : { r1: 0, u1: 0, r2: p.r2 };
}

/** Whether the pattern reuses no layer at all (a full prefill). */
export function reusesNothing(p: ReusePattern, layers: number): boolean {
  return planReuse(p, layers).recomputed === layers;
}

/** The layers a pattern recomputes, ascending: [0, r1) then [u1, r2). */
export function recomputedLayers(p: ReusePattern, layers: number): number[] {
  return planReuse(p, layers)
    .actions.map((a, l) => (a === 'compute' ? l : -1))
    .filter((l) => l >= 0);
}
