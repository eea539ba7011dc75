import { CHUNK_TOKENS } from './chunk.constants.js';
import { nextChunkKey } from './chunk-key.hasher.js';

/**
 * How many whole chunks of `tokens`, from the first, are held under `modelId` and `tenantSalt`:
 * the chain is walked key by key and stops at the first chunk `isHeld` denies, so a prompt's keys
 * under another model are hashed only as far as some copy of them exists. At most `maxChunks`
 * (and never past the last whole chunk).
 */
export function heldChunkPrefix(
  modelId: string,
  tenantSalt: string,
  tokens: readonly number[],
  isHeld: (key: string) => boolean,
  maxChunks = Math.floor(tokens.length / CHUNK_TOKENS),
): number {
  const chunks = Math.min(maxChunks, Math.floor(tokens.length / CHUNK_TOKENS));
  let prev: string | null = null;
  for (let c = 0; c < chunks; c++) {
    prev = nextChunkKey(prev, modelId, tenantSalt, tokens.slice(c * CHUNK_TOKENS, (c + 1) * CHUNK_TOKENS));
    if (!isHeld(prev)) return c;
  }
  return chunks;
}
