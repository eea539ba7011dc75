import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, CHUNK_TOKENS } from '../keys/chunk.constants.js';
import type { LookupTable } from './lookup.table.js';
import type { PrefixChunk } from './lookup.types.js';
import type { PoolTier } from './pool.types.js';

/** A request's prompt as the offload tiers key it. */
export interface RestorePrompt {
  /** One per whole 256-token chunk of the prompt, in order. */
  readonly chunkKeys: readonly string[];
  readonly promptTokens: number;
  /**
   * Keys of one chunk of the prompt, block by block (entry j names its first 16(j+1) tokens).
   * The tiers keep the partial chunks sequences leave; a restore that runs out of whole chunks
   * looks for the longest of them in the next chunk.
   */
  readonly blockKeys?: (chunk: number) => readonly string[];
}

/** What the tiers can restore past the device's prefix: the chunks to read, and where the restored positions end. */
export interface RestoreReach {
  /** From the chunk `deviceTokens` falls in, in order; the last may be a partial chunk. */
  readonly chunks: PrefixChunk[];
  /** End of the restorable positions (at most promptTokens - 1: one row computes the logits); ≤ deviceTokens when nothing helps. */
  readonly until: number;
}

/**
 * The chunks the tiers hold from the one `deviceTokens` falls in, and where they end: whole
 * chunks first, then the longest partial chunk held of the chunk after them (it must reach past
 * the device's prefix to count).
 */
export function restoreReach(table: LookupTable, p: RestorePrompt, deviceTokens: number): RestoreReach {
  const first = Math.floor(deviceTokens / CHUNK_TOKENS);
  const chunks = table.longestPrefix(p.chunkKeys.slice(first));
  const next = first + chunks.length;
  let end = next * CHUNK_TOKENS;
  if (end < p.promptTokens - 1 && p.blockKeys) {
    // The whole chunk (the last key, when there are 16) was looked up already.
    const keys = p.blockKeys(next).slice(0, BLOCKS_PER_CHUNK - 1);
    for (let j = keys.length - 1; j >= 0 && end + (j + 1) * BLOCK_TOKENS > deviceTokens; j--) {
      const [partial] = table.longestPrefix([keys[j]!]);
      if (!partial) continue;
      chunks.push(partial);
      end += (j + 1) * BLOCK_TOKENS;
      break;
    }
  }
  return { chunks, until: Math.min(end, p.promptTokens - 1) };
}

/** Keys a restore stamps as used now: the prompt's, and the partial chunk it reads past them. */
export function restoreTouchKeys(p: RestorePrompt, reach: RestoreReach): string[] {
  return [...p.chunkKeys, ...reach.chunks.slice(-1).map((c) => c.chunkKey)];
}

/** Whether every layer of the chunk is in host memory. */
export function inHost(c: PrefixChunk): boolean {
  return c.mem.every((loc) => loc !== undefined);
}

/** The tier one layer of a chunk is read from during a restore: host when it is there, else SSD. */
export function restoreTier(c: PrefixChunk, layer: number): PoolTier {
  return c.mem[layer] ? 'mem' : 'ssd';
}

/** Only a restore that reads SSD gains from starting its reads while its request waits (a warm restore). */
export function worthWarming(reach: RestoreReach, deviceTokens: number): boolean {
  return reach.until > deviceTokens && !reach.chunks.every(inHost);
}

/**
 * FastSwitch's host copy (SwapHostCopies): the leading chunks of a sequence's KV that host
 * memory holds in every layer, which a swap-out need not copy again.
 */
export function hostResidentPrefix(chunks: readonly PrefixChunk[]): PrefixChunk[] {
  const out: PrefixChunk[] = [];
  for (const c of chunks) {
    if (!inHost(c)) break;
    out.push(c);
  }
  return out;
}

/** Of `chunks` (those from the one `from` falls in on), the ones covering positions [from, until). */
export function chunksCovering<C>(chunks: readonly C[], from: number, until: number): C[] {
  return chunks.slice(0, Math.ceil(until / CHUNK_TOKENS) - Math.floor(from / CHUNK_TOKENS));
}

/** Restored tokens of [from, until) by the tier they come from: host when every layer of their chunk was read from host memory. */
export function restoredTokensByTier(
  chunks: readonly PrefixChunk[],
  from: number,
  until: number,
  allHost: (chunk: number) => boolean,
): Record<PoolTier, number> {
  const out: Record<PoolTier, number> = { mem: 0, ssd: 0 };
  chunks.forEach((c, i) => {
    const start = Math.max(from, c.position * CHUNK_TOKENS);
    const end = Math.min(until, (c.position + 1) * CHUNK_TOKENS);
    out[allHost(i) ? 'mem' : 'ssd'] += Math.max(0, end - start);
  });
  return out;
}
