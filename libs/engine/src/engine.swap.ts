import type { KvRestoreTarget } from './engine.restore.js';

/** Device KV memory and swap preemption (FastSwitch): the parts of an engine the node-manager's memory planning uses. */

/** One model's device KV memory, in blocks of 16 tokens. */
export interface KvBudget {
  readonly capacity: number;
  /** Blocks an allocation can take now: free ones plus cached ones nobody holds (reclaimed on demand). */
  readonly available: number;
}

/** What one swap call moved. */
export interface SwapReport {
  /** Sequences whose KV moved; a swap-out leaves out those the host swap space had no room for. */
  readonly seqIds: readonly string[];
  readonly blocks: number;
  readonly bytes: number;
  /** Copies issued (one per range handed to the copy workers). */
  readonly copies: number;
  readonly ms: number;
  /** Swap-out: blocks left out of the copy because host memory outside the swap space keeps them (SwapHostCopies). */
  readonly heldBlocks?: number;
}

/**
 * Swap preemption (FastSwitch): a preempted sequence's KV is copied to host memory and back
 * instead of recomputed. Engines whose KV is not in memory the copy workers can reach leave it out.
 */
export interface KvSwap {
  /** `grouped`: block groups and group-sized copies, host copies reused; `per-block`: vLLM-style copies, nothing reused. */
  readonly granularity: 'grouped' | 'per-block';
  /**
   * Whether a copy runs beside compute without taking its resources (a GPU's copy engines), so
   * an asynchronous swap-in hides its copy behind other sequences' compute; false where copies
   * and compute share the same cores.
   */
  readonly overlapsCompute: boolean;
  /**
   * Copies running sequences' KV to host memory, then frees their device blocks (held until the
   * copy completes, so nobody can be handed a block still being read). They are then preempted
   * and come back by {@link swapIn}; those the host space cannot take are left running.
   */
  swapOut(seqIds: readonly string[]): Promise<SwapReport>;
  /**
   * Takes device blocks for swapped-out sequences (as many as resumeBlocks says; device
   * prefix-cache hits are attached, not copied) and copies their KV back; they decode once it
   * settles. Released meanwhile: its blocks are freed when the copy ends.
   */
  swapIn(seqIds: readonly string[]): Promise<SwapReport>;
  isSwapped(seqId: string): boolean;
  /** Host bytes the swapped-out (and reusable) copies take. */
  hostBytes(): number;
  /**
   * Host memory that already keeps whole chunks of KV (the node's KV store host pool): a
   * swap-out leaves the chunks it holds out of the swap copy and a swap-in copies them back
   * from there, so one host copy serves both. Absent: every block goes to the swap copy.
   */
  useHostCopies?(copies: SwapHostCopies): void;
}

/** KV kept in host memory outside the swap space, by content (model, tenant salt, token ids). */
export interface SwapHostCopies {
  /**
   * Pins the longest run of whole chunks at the start of `tokens` that host memory holds in
   * every layer, so nothing evicts them until {@link HeldKv.release}; undefined when it holds
   * none. Called when a sequence is first swapped out.
   */
  hold(model: string, salt: string, tokens: readonly number[]): HeldKv | undefined;
}

/** KV of positions [0, until) kept pinned in host memory for a swapped-out sequence. */
export interface HeldKv {
  /** A whole number of chunks. */
  readonly until: number;
  /**
   * Copies layer `layer` of [0, until) into the engine's KV memory at `target`, each segment's
   * CRC32C checked; rejects with DataLoss on a mismatch (the sequence then recomputes).
   */
  loadInto(layer: number, target: KvRestoreTarget): Promise<void>;
  /** Lets the pins go; called once. */
  release(): void;
}
