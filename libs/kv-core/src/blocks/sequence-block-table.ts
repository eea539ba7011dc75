import { BLOCK_TOKENS } from '../keys/chunk.constants.js';
import { blocksFor, slotOf } from './block.math.js';

/** Where an append takes its new blocks from (the device block manager). */
export interface BlockSource {
  allocate(n: number): number[] | null;
}

/** What appending tokens to a sequence needs and where each token lands. */
export interface AppendPlan {
  /** Physical blocks that had to be added, in logical order. */
  newBlocks: number[];
  /** Slot of each appended token, in order (see {@link slotOf}). */
  slots: Int32Array;
}

/**
 * One sequence's logical → physical block list.
 * Invariant: `blocks.length === blocksFor(numTokens)` — no block is held ahead of need, so a
 * preempted sequence releases exactly what it used.
 *
 * To share a cached prefix, `acquire` its blocks at the block manager and pass them here. Share
 * whole blocks only: {@link append} writes into a partial last block in place, which would
 * corrupt the other holders (copy that block first, or share one block less).
 */
export class SequenceBlockTable {
  private readonly table: number[];
  private tokens: number;

  constructor(
    blocks: readonly number[] = [],
    numTokens = 0,
    readonly blockTokens: number = BLOCK_TOKENS,
  ) {
    if (blocks.length !== blocksFor(numTokens, blockTokens)) {
      throw new RangeError(`${numTokens} tokens need ${blocksFor(numTokens, blockTokens)} blocks, got ${blocks.length}`);
    }
    this.table = [...blocks];
    this.tokens = numTokens;
  }

  get numTokens(): number {
    return this.tokens;
  }

  get blocks(): readonly number[] {
    return this.table;
  }

  /** New physical blocks needed to append `newTokens` tokens. */
  blocksNeeded(newTokens: number): number {
    return blocksFor(this.tokens + newTokens, this.blockTokens) - this.table.length;
  }

  /**
   * Appends `newTokens` tokens using `newBlocks` (exactly {@link blocksNeeded} of them, e.g.
   * from an allocator) and returns the slot of each new token.
   */
  append(newTokens: number, newBlocks: readonly number[]): AppendPlan {
    const need = this.blocksNeeded(newTokens);
    if (newBlocks.length !== need) throw new RangeError(`appending ${newTokens} tokens needs ${need} blocks, got ${newBlocks.length}`);
    this.table.push(...newBlocks);
    const start = this.tokens;
    this.tokens += newTokens;
    const slots = new Int32Array(newTokens);
    for (let i = 0; i < newTokens; i++) slots[i] = slotOf(this.table, start + i, this.blockTokens);
    return { newBlocks: [...newBlocks], slots };
  }

  /** Allocates what {@link append} needs from `allocator`; null (and no change) if it has no room. */
  appendFrom(allocator: BlockSource, newTokens: number): AppendPlan | null {
    const ids = allocator.allocate(this.blocksNeeded(newTokens));
    return ids === null ? null : this.append(newTokens, ids);
  }

  slotOf(pos: number): number {
    if (pos >= this.tokens) throw new RangeError(`token ${pos} is beyond the sequence (${this.tokens} tokens)`);
    return slotOf(this.table, pos, this.blockTokens);
  }

  /** Empties the table and returns its blocks for the caller to release (decRef) at the allocator. */
  clear(): number[] {
    const out = this.table.splice(0);
    this.tokens = 0;
    return out;
  }
}
