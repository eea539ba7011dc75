import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, CHUNK_TOKENS } from './chunk.constants.js';
import { chainHeader, chainLink, CHUNK_KEY_BYTES, hexToKey, keyToHex } from './chunk-key.hasher.js';

/**
 * Content keys of a sequence's full 16-token device blocks, consistent with chunk keys: the key
 * of block j of chunk c is the chunk-key link over chunk c's tokens *up to the end of block j*,
 *
 *   blockKey(c, j) = nextChunkKey(chunkKey_{c-1}, model, salt, tokens[256c, 256c + 16(j+1)))
 *
 * so the last block of every complete chunk carries exactly that chunk's key (the one the gateway
 * sends and the offload tiers store under), and any block key names the whole prefix up to its
 * end (model and tenant salt included). Extended incrementally as a sequence's KV grows.
 */
export class BlockKeyChain {
  private readonly chain: string[] = [];
  /** The (model, salt) header, encoded once; and the bytes of the last chunk key linked from. */
  private header?: Buffer;
  private prev: { chunk: number; bytes: Uint8Array } = { chunk: 0, bytes: new Uint8Array(CHUNK_KEY_BYTES) };

  constructor(
    readonly modelId: string,
    readonly salt: string,
  ) {}

  /**
   * A chain that starts from keys already computed for the first blocks of the tokens it will
   * be extended with (a conversation's next prompt starts with the KV of its last one): the
   * caller vouches that `keys` are those blocks' keys under (model, salt). Copies the keys.
   */
  static from(modelId: string, salt: string, keys: readonly string[]): BlockKeyChain {
    const c = new BlockKeyChain(modelId, salt);
    for (const k of keys) c.chain.push(k);
    return c;
  }

  /** Keys of the blocks covered so far, in order. */
  get keys(): readonly string[] {
    return this.chain;
  }

  /**
   * Adds the keys of every full block of `tokens` (the sequence's tokens from position 0; a
   * prefix already keyed must not change) not keyed yet, up to `maxBlocks` keys in all;
   * returns only the new keys.
   */
  extend(tokens: readonly number[], maxBlocks = Infinity): string[] {
    const full = Math.min(maxBlocks, Math.floor(tokens.length / BLOCK_TOKENS));
    const added: string[] = [];
    if (this.chain.length < full) this.header ??= chainHeader(this.modelId, this.salt);
    for (let b = this.chain.length; b < full; b++) {
      const chunk = Math.floor(b / BLOCKS_PER_CHUNK);
      if (this.prev.chunk !== chunk)
        this.prev = { chunk, bytes: chunk === 0 ? new Uint8Array(CHUNK_KEY_BYTES) : hexToKey(this.chain[chunk * BLOCKS_PER_CHUNK - 1]!) };
      const key = keyToHex(
        chainLink(this.prev.bytes, this.header!, tokens, chunk * CHUNK_TOKENS, (b + 1) * BLOCK_TOKENS - chunk * CHUNK_TOKENS),
      );
      this.chain.push(key);
      added.push(key);
    }
    return added;
  }

  /** Keeps the first `blocks` keys (the tokens after them may differ from those hashed). */
  truncate(blocks: number): void {
    if (blocks < this.chain.length) this.chain.length = blocks;
  }
}

/** Block keys of every full block of `tokens` (see {@link BlockKeyChain}). */
export function blockKeys(modelId: string, salt: string, tokens: readonly number[]): string[] {
  return new BlockKeyChain(modelId, salt).extend(tokens);
}

/**
 * Block keys of the full blocks of chunk `chunk` of `tokens`, as {@link BlockKeyChain} would give
 * them: entry j names the chunk's first 16(j+1) tokens (for a whole chunk the last entry is its
 * chunk key). `chunkKeys` are the keys of the whole chunks of `tokens` (the gateway's), so only
 * this chunk is hashed. Empty for a chunk past the tokens.
 */
export function chunkBlockKeys(
  modelId: string,
  salt: string,
  tokens: readonly number[],
  chunkKeys: readonly string[],
  chunk: number,
): string[] {
  const whole = Math.floor(tokens.length / CHUNK_TOKENS);
  if (chunkKeys.length !== whole) throw new RangeError(`${tokens.length} tokens have ${whole} whole chunks, got ${chunkKeys.length} keys`);
  if (!Number.isInteger(chunk) || chunk < 0) throw new RangeError(`bad chunk index ${chunk}`);
  const start = chunk * CHUNK_TOKENS;
  const out: string[] = [];
  if (start + BLOCK_TOKENS > tokens.length) return out;
  const prev = chunk === 0 ? new Uint8Array(CHUNK_KEY_BYTES) : hexToKey(chunkKeys[chunk - 1]!);
  const header = chainHeader(modelId, salt);
  for (let end = start + BLOCK_TOKENS; end <= Math.min(tokens.length, start + CHUNK_TOKENS); end += BLOCK_TOKENS)
    out.push(keyToHex(chainLink(prev, header, tokens, start, end - start)));
  return out;
}
