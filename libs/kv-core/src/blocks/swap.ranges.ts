import { BLOCK_TOKENS } from '../keys/chunk.constants.js';

/** How swap copies are cut: FastSwitch's group-sized runs, or vLLM's one copy per block, layer and K/V. */
export type SwapGranularity = 'grouped' | 'per-block';

/**
 * One copy between a device block run and a sequence's host copy, in units of a block's floats
 * (`[layer][K|V][token][row]` per block) — `offset`/`length` are sub-block for per-block copies.
 */
export interface SwapRange {
  /** First device block, and element offset inside it. */
  readonly deviceBlock: number;
  /** Host copy segment and the block inside it. */
  readonly segment: number;
  readonly segmentBlock: number;
  /** Elements into the block where the copy starts, and how many it moves. */
  readonly offset: number;
  readonly length: number;
}

/**
 * The copies that move logical blocks `[from, physical.length)` of a sequence between the
 * device (block ids `physical`) and its host copy (logical block b lives in segment
 * ⌊b / segmentBlocks⌋). Grouped: one copy per run of blocks consecutive on both sides —
 * a sequence allocated in block groups needs a handful. Per-block: `layers · 2` copies per
 * block, the way a per-layer KV layout forces (vLLM's swap_blocks), kept as the baseline.
 */
export function planSwapRanges(
  physical: readonly number[],
  from: number,
  segmentBlocks: number,
  blockElems: number,
  layers: number,
  granularity: SwapGranularity,
): SwapRange[] {
  if (!Number.isInteger(segmentBlocks) || segmentBlocks < 1)
    throw new RangeError(`segmentBlocks must be a positive integer, got ${segmentBlocks}`);
  if (blockElems % (2 * layers) !== 0)
    throw new RangeError(`a block of ${blockElems} elements does not split into ${layers} layers of K and V`);
  const out: SwapRange[] = [];
  if (granularity === 'per-block') {
    const part = blockElems / (2 * layers);
    for (let b = from; b < physical.length; b++) {
      for (let p = 0; p < 2 * layers; p++) {
        out.push({
          deviceBlock: physical[b]!,
          segment: Math.floor(b / segmentBlocks),
          segmentBlock: b % segmentBlocks,
          offset: p * part,
          length: part,
        });
      }
    }
    return out;
  }
  for (let b = from; b < physical.length;) {
    let e = b + 1;
    while (e < physical.length && physical[e] === physical[e - 1]! + 1 && e % segmentBlocks !== 0) e++;
    out.push({
      deviceBlock: physical[b]!,
      segment: Math.floor(b / segmentBlocks),
      segmentBlock: b % segmentBlocks,
      offset: 0,
      length: (e - b) * blockElems,
    });
    b = e;
  }
  return out;
}

/**
 * Logical blocks a swap-out can leave out because the sequence's host copy still holds them
 * (FastSwitch §3.3): the full blocks of the last copy, `copiedTokens` long, are unchanged on the
 * device — KV is append-only — while its partial tail is not. None without a copy, or when the
 * copy is longer than the sequence (it belongs to other content: start over).
 */
export function reusedSwapBlocks(copiedTokens: number | undefined, tokens: number, blockTokens: number = BLOCK_TOKENS): number {
  if (copiedTokens === undefined || copiedTokens > tokens) return 0;
  return Math.floor(copiedTokens / blockTokens);
}

/**
 * How many copies {@link planSwapRanges} would cut for the same blocks, without building them:
 * what a caller that only prices the copies (calls × dispatch + bytes / bandwidth) needs.
 */
export function countSwapRanges(
  physical: readonly number[],
  from: number,
  segmentBlocks: number,
  layers: number,
  granularity: SwapGranularity,
): number {
  if (!Number.isInteger(segmentBlocks) || segmentBlocks < 1)
    throw new RangeError(`segmentBlocks must be a positive integer, got ${segmentBlocks}`);
  if (from >= physical.length) return 0;
  if (granularity === 'per-block') return (physical.length - from) * 2 * layers;
  let n = 1;
  for (let e = from + 1; e < physical.length; e++) if (physical[e] !== physical[e - 1]! + 1 || e % segmentBlocks === 0) n++;
  return n;
}
