import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { nextChunkKey } from '../keys/chunk-key.hasher.js';
import { isTilingBlockSize } from './vllm-block.mapping.js';

/** A BlockStored as decoded from an external engine (hashes as strings: ints in decimal, bytes in hex). */
export interface ExternalBlocksStored {
  readonly blockHashes: readonly string[];
  readonly parentBlockHash: string | null;
  readonly tokenIds: readonly number[];
  readonly blockSize: number;
}

/** Outcome of folding one BlockStored: our keys for its blocks, or why they could not be placed. */
export type FoldResult =
  | { readonly ok: true; readonly keys: readonly string[] }
  | { readonly ok: false; readonly reason: 'unknown_parent' | 'bad_block_size' | 'bad_shape' };

interface BlockState {
  /** Our key of this block (a chunk key when it ends a chunk, else a block key). */
  readonly key: string;
  /** Key of the last whole chunk before this block's chunk (null in the first chunk). */
  readonly chunkParent: string | null;
  /** Tokens from the start of this block's chunk to the end of this block. */
  readonly chunkTokens: readonly number[];
}

/**
 * Turns one external engine's vLLM-format block events into Mnemo keys, so its KV lands in the
 * same directory as our nodes' (see vllm-block.mapping.ts for the mapping).
 *
 * An engine's block hashes are its own (vLLM seeds them per process), so we cannot recompute
 * them; instead each stored block's tokens are kept from the chunk's start, and our key for the
 * block is the chunk-key link over them, chained on the previous chunk's key. A block whose
 * parent we never saw cannot be placed (its prefix is unknown): it is refused, not guessed.
 *
 * Bounded: at most `maxBlocks` block states, least recently stored or used first out (a block
 * evicted here only stops later children from being placed).
 */
export class VllmBlockFolder {
  private readonly blocks = new Map<string, BlockState>();

  constructor(
    readonly model: string,
    readonly tenantSalt: string,
    readonly maxBlocks = 1_000_000,
  ) {
    if (!Number.isInteger(maxBlocks) || maxBlocks < 1) throw new RangeError(`maxBlocks must be a positive integer, got ${maxBlocks}`);
  }

  stored(e: ExternalBlocksStored): FoldResult {
    if (!isTilingBlockSize(e.blockSize)) return { ok: false, reason: 'bad_block_size' };
    if (e.tokenIds.length !== e.blockHashes.length * e.blockSize) return { ok: false, reason: 'bad_shape' };
    let parent: BlockState | null = null;
    if (e.parentBlockHash !== null) {
      parent = this.touch(e.parentBlockHash) ?? null;
      if (!parent) return { ok: false, reason: 'unknown_parent' };
    }
    const keys: string[] = [];
    for (let i = 0; i < e.blockHashes.length; i++) {
      // The parent ended a chunk: this block starts the next one, chained on that chunk's key.
      const startsChunk = parent === null || parent.chunkTokens.length === CHUNK_TOKENS;
      const chunkParent = parent === null ? null : startsChunk ? parent.key : parent.chunkParent;
      const before = startsChunk ? [] : parent!.chunkTokens;
      const chunkTokens = [...before, ...e.tokenIds.slice(i * e.blockSize, (i + 1) * e.blockSize)];
      const state: BlockState = { key: nextChunkKey(chunkParent, this.model, this.tenantSalt, chunkTokens), chunkParent, chunkTokens };
      this.remember(e.blockHashes[i]!, state);
      keys.push(state.key);
      parent = state;
    }
    return { ok: true, keys };
  }

  /** Our keys of removed blocks (unknown hashes are skipped); their states stay for later children. */
  removed(blockHashes: readonly string[]): string[] {
    const keys: string[] = [];
    for (const h of blockHashes) {
      const s = this.blocks.get(h);
      if (s) keys.push(s.key);
    }
    return keys;
  }

  /** AllBlocksCleared: nothing is held any more, and no old parent can be trusted. */
  cleared(): void {
    this.blocks.clear();
  }

  get size(): number {
    return this.blocks.size;
  }

  private touch(hash: string): BlockState | undefined {
    const s = this.blocks.get(hash);
    if (s) {
      this.blocks.delete(hash);
      this.blocks.set(hash, s);
    }
    return s;
  }

  private remember(hash: string, s: BlockState): void {
    this.blocks.delete(hash);
    this.blocks.set(hash, s);
    if (this.blocks.size > this.maxBlocks) this.blocks.delete(this.blocks.keys().next().value!);
  }
}
