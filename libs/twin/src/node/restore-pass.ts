import { CHUNK_TOKENS } from '@mnemo/kv-core';

/** One sequence's restore during a prefill pass, as the pass sees it. */
export interface PassLoad {
  /** Restored positions [from, until). */
  readonly from: number;
  readonly until: number;
  /** The pass asks for layer `layer` at `at`; returns when its load is done (before any priced link). Called in layer order. */
  load(layer: number, at: number): number;
}

/**
 * Waits shorter than this are folded into the next one (the sim engine's MIN_SLEEP_MS): a timer
 * costs about a millisecond whatever it is asked for.
 */
export const MIN_SLEEP_MS = 2;

/**
 * The sim engine's restoring prefill pass in virtual time (libs/engine sim-kv.restore.ts): the
 * compute of `computeMs` is spread evenly over `layers`; load(l) is asked when layer l - 1
 * starts computing and awaited before layer l; a priced link (`restorePerChunkMs` per restored
 * chunk) carries the layers one after another; every modelled wait is a timer that fires
 * `timerLag()` late. Returns when the pass ends and the time compute waited on loads.
 */
export function restorePass(
  loads: readonly PassLoad[],
  computeMs: number,
  layers: number,
  start: number,
  restorePerChunkMs: number,
  timerLag: () => number,
): { end: number; blockedMs: number } {
  const perLayer = computeMs / layers;
  let t = start;
  let computeEnd = start;
  let blocked = 0;
  let linkFree = start;
  let loadsDone = 0;
  let arriveBy = 0;
  const startLoads = (layer: number) => {
    loadsDone = t;
    let linkMs = 0;
    for (const r of loads) {
      loadsDone = Math.max(loadsDone, r.load(layer, t));
      linkMs += (((r.until - r.from) / CHUNK_TOKENS) * restorePerChunkMs) / layers;
    }
    linkFree = Math.max(linkFree, t) + linkMs;
    arriveBy = linkFree;
  };
  startLoads(0);
  for (let layer = 0; layer < layers; layer++) {
    t = Math.max(t, loadsDone);
    const arrived = Math.max(t, arriveBy);
    if (arrived > computeEnd) {
      blocked += arrived - computeEnd;
      computeEnd = arrived;
    }
    if (computeEnd - t >= MIN_SLEEP_MS) t = computeEnd + timerLag();
    computeEnd += perLayer;
    if (layer + 1 < layers) startLoads(layer + 1);
  }
  if (computeEnd > t) t = computeEnd + timerLag();
  return { end: t, blockedMs: blocked };
}
