import type { NodeSeq } from '@mnemo/kv-core';
import type { ComputeModel } from '../costs/compute.port.js';
import type { ModelSpec } from '../costs/hardware.tables.js';
import type { TransferLink } from '../costs/transfer.port.js';
import type { PriorityTrace } from './priority.trace.js';

/** FastSwitch's three mechanisms, each on or off (all off: vLLM's per-block swaps). */
export interface SwapMechanisms {
  /** §3.1: block groups — a sequence's blocks are contiguous runs, copied one run per call. */
  readonly groups: boolean;
  /** §3.2: adaptive asynchronous swap-in (kv-core SwapInPolicy); off: every swap-in stalls the iteration. */
  readonly asyncSwapIn: boolean;
  /** §3.3: host copies outlive their swap-in and the turn, so a swap-out copies only blocks written since. */
  readonly reuse: boolean;
  /**
   * Block groups on vLLM's KV layout, where each layer's K and V are tensors of their own (FastSwitch §3.1 plugs its
   * groups into vLLM's KV management): a run of blocks is then 2 × layers copies, not Mnemo's one (block-major
   * layout). Only the labelled rows that reproduce the paper's own system set it.
   */
  readonly perLayerRuns?: boolean;
}

export const VLLM_SWAP: SwapMechanisms = { groups: false, asyncSwapIn: false, reuse: false };
export const FASTSWITCH: SwapMechanisms = { groups: true, asyncSwapIn: true, reuse: true };

/** One turn of a conversation: the tokens the user adds, the reply, and the think time before the next turn. */
export interface SwapTurn {
  readonly userTokens: number;
  readonly replyTokens: number;
  readonly thinkMs: number;
}

export interface SwapConversation {
  /** When its first turn arrives, ms. */
  readonly arrivalMs: number;
  readonly turns: readonly SwapTurn[];
}

export interface SwapInstanceConfig {
  readonly compute: ComputeModel;
  readonly model: ModelSpec;
  /** The host ↔ device link, each direction on its own (PCIe is full duplex). */
  readonly link: TransferLink;
  readonly deviceBlocks: number;
  /** Host memory for swapped-out KV (FastSwitch §4: 60 GB per GPU). */
  readonly hostBytes: number;
  readonly maxBatch: number;
  readonly maxPrefillTokens: number;
  /** First block group's size (§3.1: 60 blocks). */
  readonly groupBlocks: number;
  /** Blocks per host-copy segment (a copy run never crosses one). */
  readonly segmentBlocks: number;
  readonly mechanisms: SwapMechanisms;
  /** Each conversation's level at each priority update (a {@link PriorityTrace}). */
  readonly trace: Pick<PriorityTrace, 'level' | 'forget'>;
  /** Iterations between priority updates: 1 / the priority-update frequency. */
  readonly updateEvery: number;
  /**
   * Prefill with prefix (FastSwitch §4, Implementation: both of the paper's systems run lightllm's
   * prefill-with-prefix kernel): a turn that ends is copied to host memory (with reuse, only the
   * blocks its copy lacks), and the next turn swaps that copy in and computes only its new tokens.
   * A copy the host gave up is recomputed whole. Off (default): vLLM 0.3.3 as released, every turn
   * computes its whole history.
   */
  readonly prefixKept?: boolean;
}

/** What one run measured. */
export interface SwapRunResult {
  readonly requests: number;
  readonly ttftMs: number[];
  /** Every gap between two tokens of one request. */
  readonly tbtMs: number[];
  readonly iterations: number;
  readonly endMs: number;
  readonly swapOuts: number;
  readonly swapOutBlocks: number;
  readonly swapOutCalls: number;
  /** Blocks a swap-out left out because the host copy held them (§3.3). */
  readonly reusedBlocks: number;
  readonly swapIns: number;
  readonly swapInBlocks: number;
  readonly asyncSwapIns: number;
  /** Preempted by recompute because the host had no room. */
  readonly recomputes: number;
  /** Turns that started from their conversation's host copy (prefixKept), and the copy tokens they did not compute. */
  readonly prefixRestores: number;
  readonly prefixRestoredTokens: number;
  /**
   * Time iterations stood still for copies: swap-outs, synchronous swap-ins, overdue asynchronous ones (context-switching overhead, Fig.
   * 10).
   */
  readonly switchStallMs: number;
  /** Time spent computing (prefill and decode). */
  readonly computeMs: number;
  /** Average blocks per copy call of a grouped swap (§3.1: about 20 blocks per group on this setup). */
  readonly blocksPerCall: number;
  /** Time the swap-outs' copies took. */
  readonly swapOutMs: number;
  /**
   * The same swap-outs, each priced as a traditional one that copies all of the sequence's blocks
   * whatever the host holds (Table 1's left column): equal to the run's own where reuse is off.
   */
  readonly traditionalSwapOut: { readonly blocks: number; readonly calls: number; readonly ms: number };
}

/** One request (a conversation's turn) as the node holds it: kv-core's NodeSeq plus its timing. */
export interface SwapSeq extends NodeSeq {
  priority: number;
  phase: 'waiting' | 'running' | 'swapping';
  preempted: boolean;
  swapped: boolean;
  readonly conv: number;
  readonly turn: number;
  /** KV tokens written so far (the prompt once prefilled, plus one per decoded token). */
  tokens: number;
  generated: number;
  readonly reply: number;
  readonly arrivalMs: number;
  lastTokenMs: number;
  blocks: number[];
  /** An asynchronous swap-in's copy ends at. */
  doneAt: number;
  /** History tokens its admission swaps in from the host copy instead of computing (prefixKept); 0 once admitted. */
  prefixTokens: number;
}
