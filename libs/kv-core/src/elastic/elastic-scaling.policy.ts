/**
 * SwiftCache Algorithm 1: how many blocks a worker's elastic cache takes back (scale-up, on a
 * request it cannot hold) or gives away (scale-down, periodic, from the longest request seen in a
 * time window), always in whole minimum elastic units so both models stay aligned.
 */
import type { ElasticUnit } from './elastic-unit.math.js';

/** Blocks to move: the worker's change and the master's opposite change (both ≥ 0). */
export interface ScaleStep {
  readonly workerBlocks: number;
  readonly masterBlocks: number;
}

export const NO_STEP: ScaleStep = { workerBlocks: 0, masterBlocks: 0 };

function check(ownedBlocks: number, blockTokens: number, tokens: number): void {
  if (!Number.isSafeInteger(ownedBlocks) || ownedBlocks < 0)
    throw new RangeError(`owned blocks must be a non-negative integer, got ${ownedBlocks}`);
  if (!Number.isSafeInteger(blockTokens) || blockTokens <= 0)
    throw new RangeError(`block tokens must be a positive integer, got ${blockTokens}`);
  if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`token count must be a non-negative integer, got ${tokens}`);
}

/** SCALEUP (lines 10–19): units the worker must reclaim so `demandTokens` fit in its own blocks. */
export function scaleUp(ownedBlocks: number, blockTokens: number, unit: ElasticUnit, demandTokens: number): ScaleStep {
  check(ownedBlocks, blockTokens, demandTokens);
  const need = Math.ceil(demandTokens / blockTokens);
  if (need <= ownedBlocks) return NO_STEP;
  const k = Math.ceil((need - ownedBlocks) / unit.workerBlocks);
  return { workerBlocks: k * unit.workerBlocks, masterBlocks: k * unit.masterBlocks };
}

/** SCALEDOWN (lines 21–31): units the worker can lend, keeping room for the window's longest demand. */
export function scaleDown(ownedBlocks: number, blockTokens: number, unit: ElasticUnit, windowMaxTokens: number): ScaleStep {
  check(ownedBlocks, blockTokens, windowMaxTokens);
  const maxNeed = Math.ceil(windowMaxTokens / blockTokens);
  if (maxNeed >= ownedBlocks) return NO_STEP;
  const k = Math.floor((ownedBlocks - maxNeed) / unit.workerBlocks);
  return { workerBlocks: k * unit.workerBlocks, masterBlocks: k * unit.masterBlocks };
}
