import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, BlockKeyChain } from '@mnemo/kv-core';

/**
 * A prompt's block keys, hashed once and shared by everyone who asks — the scheduler's partial
 * chunk lookups, the node's prefix-cache planning, its restore of a partial chunk — and seeded
 * with the keys of the session's previous turn, whose KV the prompt starts with. The keys are a
 * pure function of (model, salt, tokens), so sharing them changes no decision; the CPU hashing
 * costs the live services is charged separately (the calibrated per-token node CPU).
 */
export class PromptKeys {
  readonly chain: BlockKeyChain;

  constructor(
    model: string,
    salt: string,
    private readonly tokens: readonly number[],
    /** Keys of blocks the prompt starts with (the previous turn's KV), if known. */
    seed: readonly string[] = [],
  ) {
    this.chain = BlockKeyChain.from(
      model,
      salt,
      seed.length * BLOCK_TOKENS <= tokens.length ? seed : seed.slice(0, Math.floor(tokens.length / BLOCK_TOKENS)),
    );
  }

  /** Block keys of chunk `chunk` of the prompt, as chunkBlockKeys gives them. */
  blockKeys(chunk: number): readonly string[] {
    const start = chunk * BLOCKS_PER_CHUNK;
    const end = Math.min(start + BLOCKS_PER_CHUNK, Math.floor(this.tokens.length / BLOCK_TOKENS));
    if (end <= start) return [];
    this.chain.extend(this.tokens, end);
    return this.chain.keys.slice(start, end);
  }
}
