import { BLOCK_TOKENS, CHUNK_TOKENS } from '../keys/chunk.constants.js';

/** Half-open range `[start, end)`. */
export interface Range {
  start: number;
  end: number;
}

/** Where a token sits in a sequence's logical block list. */
export interface BlockPosition {
  /** Logical block index (index into the sequence's block table). */
  block: number;
  /** Offset inside that block, `0 ≤ offset < blockTokens`. */
  offset: number;
}

// Argument checks throw RangeError: a bad count here is a caller bug, not a client request error.
function assertCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}
function assertSize(name: string, n: number): void {
  if (!Number.isInteger(n) || n <= 0) throw new RangeError(`${name} must be a positive integer, got ${n}`);
}

/** Units of `unitTokens` tokens that `tokens` tokens fill: whole ones (`floor`) or touch (`ceil`). */
function unitsOf(tokens: number, unitName: string, unitTokens: number, round: (x: number) => number): number {
  assertCount('tokens', tokens);
  assertSize(unitName, unitTokens);
  return round(tokens / unitTokens);
}

/** Token range `[index, index + 1)` in units of `unitTokens` tokens. */
function unitRange(name: string, index: number, unitName: string, unitTokens: number): Range {
  assertCount(name, index);
  assertSize(unitName, unitTokens);
  return { start: index * unitTokens, end: (index + 1) * unitTokens };
}

/** Blocks needed to hold `tokens` tokens (a partial last block counts). */
export function blocksFor(tokens: number, blockTokens: number = BLOCK_TOKENS): number {
  return unitsOf(tokens, 'blockTokens', blockTokens, Math.ceil);
}

/** Chunks touched by `tokens` tokens (a partial last chunk counts); see {@link completeChunks}. */
export function chunksFor(tokens: number, chunkTokens: number = CHUNK_TOKENS): number {
  return unitsOf(tokens, 'chunkTokens', chunkTokens, Math.ceil);
}

/** Complete chunks in `tokens` tokens: the ones that have a chunk key and may be offloaded. */
export function completeChunks(tokens: number, chunkTokens: number = CHUNK_TOKENS): number {
  return unitsOf(tokens, 'chunkTokens', chunkTokens, Math.floor);
}

/** Token range of logical block `block`. */
export function blockTokenRange(block: number, blockTokens: number = BLOCK_TOKENS): Range {
  return unitRange('block', block, 'blockTokens', blockTokens);
}

/** Token range of chunk `chunk`. */
export function chunkTokenRange(chunk: number, chunkTokens: number = CHUNK_TOKENS): Range {
  return unitRange('chunk', chunk, 'chunkTokens', chunkTokens);
}

/** Logical block range of chunk `chunk`; requires a chunk to be a whole number of blocks. */
export function chunkBlockRange(chunk: number, chunkTokens: number = CHUNK_TOKENS, blockTokens: number = BLOCK_TOKENS): Range {
  assertCount('chunk', chunk);
  assertSize('chunkTokens', chunkTokens);
  assertSize('blockTokens', blockTokens);
  if (chunkTokens % blockTokens !== 0) {
    throw new RangeError(`chunkTokens ${chunkTokens} is not a multiple of blockTokens ${blockTokens}`);
  }
  const per = chunkTokens / blockTokens;
  return { start: chunk * per, end: (chunk + 1) * per };
}

/** Logical position of token `pos`. */
export function blockPosition(pos: number, blockTokens: number = BLOCK_TOKENS): BlockPosition {
  assertCount('pos', pos);
  assertSize('blockTokens', blockTokens);
  return { block: Math.floor(pos / blockTokens), offset: pos % blockTokens };
}

/**
 * Physical slot of token `pos`: `blockTable[pos / B] * B + pos % B` — the index of the token's
 * row in a block-major device cache (vLLM's `slot_mapping`). Throws if the table is too short,
 * since writing through a missing block would corrupt another sequence's cache.
 */
export function slotOf(blockTable: ArrayLike<number>, pos: number, blockTokens: number = BLOCK_TOKENS): number {
  const { block, offset } = blockPosition(pos, blockTokens);
  if (block >= blockTable.length) {
    throw new RangeError(`token ${pos} needs logical block ${block}, block table has ${blockTable.length}`);
  }
  return blockTable[block]! * blockTokens + offset;
}

/** Slots of tokens `[start, start + count)`, as the Int32Array a kernel takes. */
export function slotMapping(blockTable: ArrayLike<number>, start: number, count: number, blockTokens: number = BLOCK_TOKENS): Int32Array {
  assertCount('start', start);
  assertCount('count', count);
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) out[i] = slotOf(blockTable, start + i, blockTokens);
  return out;
}
