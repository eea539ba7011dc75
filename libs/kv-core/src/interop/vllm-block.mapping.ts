import { BLOCK_TOKENS, CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { hexToKey } from '../keys/chunk-key.hasher.js';
import type { DirectoryTier } from '../directory/kv-directory.types.js';

/**
 * How Mnemo's KV maps onto vLLM's KV events (`vllm/distributed/kv_events.py`: BlockStored,
 * BlockRemoved, AllBlocksCleared; 16-token blocks chained by `parent_block_hash`).
 *
 * Mnemo names KV by chained 128-bit keys: a 256-token chunk by its chunk key, and every 16-token
 * boundary inside a chunk by a block key — the chunk-key link over the chunk's tokens up to that
 * boundary (`BlockKeyChain`), so the 16th block key of a chunk *is* its chunk key. One vLLM block
 * is therefore one Mnemo block key, and one Mnemo chunk is 16 vLLM blocks:
 *
 *   Mnemo chunk c (256 tokens)   →  BlockStored{ block_hashes: h(bk[c,0]) … h(bk[c,15]),
 *                                               parent_block_hash: h(chunkKey[c-1]) | null,
 *                                               token_ids: the chunk's 256 tokens, block_size: 16 }
 *   a partial chunk (n < 16 whole blocks, e.g. a conversation's tail) → the same with n blocks
 *   tokens past the last whole block → nothing (vLLM publishes only full blocks)
 *
 * `h` is vLLM's integer form of a block hash (`ExternalBlockHash` as an int): the last 8 bytes of
 * the key, big-endian, as vLLM takes the last 8 bytes of its own 32-byte hash. Removals name the
 * same hashes, so a consumer's radix tree drops exactly the blocks it was given.
 */
export const VLLM_BLOCK_TOKENS = BLOCK_TOKENS;

/** A Mnemo block or chunk key (32 hex chars) as vLLM's integer block hash. */
export function vllmBlockHash(key: string): bigint {
  const bytes = hexToKey(key);
  let h = 0n;
  for (let i = bytes.length - 8; i < bytes.length; i++) h = (h << 8n) | BigInt(bytes[i]!);
  return h;
}

/** vLLM's `medium` for each of our tiers (the values Mooncake's indexer reads: GPU, CPU, DISK). */
export const VLLM_MEDIUM: Readonly<Record<DirectoryTier, string>> = { device: 'GPU', host: 'CPU', ssd: 'DISK' };

/** Our tier for a `medium` an external engine reports (vLLM, SGLang and Mooncake spellings); null = unknown. */
export function tierOfMedium(medium: string | null | undefined): DirectoryTier | null {
  switch ((medium ?? 'GPU').toUpperCase()) {
    case 'GPU':
    case 'NPU':
      return 'device';
    case 'CPU':
    case 'CPU_PINNED':
      return 'host';
    case 'DISK':
    case 'STORAGE':
    case 'SSD':
      return 'ssd';
    default:
      return null;
  }
}

/** A block size an external engine may use: whole blocks must tile our 256-token chunks. */
export function isTilingBlockSize(blockSize: number): boolean {
  return Number.isInteger(blockSize) && blockSize >= BLOCK_TOKENS && blockSize <= CHUNK_TOKENS && CHUNK_TOKENS % blockSize === 0;
}

/** One Mnemo chunk (whole or partial) as the blocks of a vLLM BlockStored. */
export interface VllmChunkBlocks {
  readonly blockHashes: readonly bigint[];
  readonly parentBlockHash: bigint | null;
  readonly tokenIds: readonly number[];
}

/**
 * The vLLM blocks of a chunk whose block keys are `blockKeys` (`[...superseded, key]` of a chunk
 * event), preceded by the chunk `parentKey` and holding `tokenIds`; null when they disagree
 * (a block key per 16 tokens is the invariant).
 */
export function vllmChunkBlocks(
  blockKeys: readonly string[],
  parentKey: string | null,
  tokenIds: readonly number[],
): VllmChunkBlocks | null {
  if (blockKeys.length === 0 || tokenIds.length !== blockKeys.length * BLOCK_TOKENS) return null;
  return { blockHashes: blockKeys.map(vllmBlockHash), parentBlockHash: parentKey === null ? null : vllmBlockHash(parentKey), tokenIds };
}
