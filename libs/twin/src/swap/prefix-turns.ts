import { blocksFor, reusedSwapBlocks } from '@mnemo/kv-core';
import { transferMs } from '../costs/transfer.port.js';
import type { HostSwapCopies } from './host-swap.copies.js';
import type { SwapRunCounters } from './swap-run.result.js';
import type { SwapInstanceConfig, SwapSeq as Seq } from './swap-instance.types.js';

/** What the swap twin lends its prefill-with-prefix bookkeeping. */
export interface PrefixTurnsDeps {
  readonly config: SwapInstanceConfig;
  readonly host: HostSwapCopies;
  readonly out: SwapRunCounters;
  readonly blockBytes: number;
  /** Copy calls that move logical blocks `[from, blocks.length)` of a sequence (the run's cut and layout). */
  readonly calls: (blocks: readonly number[], from: number) => number;
  /** Counts a copy's blocks and calls towards the blocks-per-call figure. */
  readonly count: (blocks: number, calls: number) => void;
  /** Conversations whose host copy a sequence still needs (not to be given up for room). */
  readonly busyConversations: () => ReadonlySet<number>;
}

/**
 * Prefill with prefix (SwapInstanceConfig.prefixKept): each turn's KV parked in host memory at
 * its end and swapped in for the next turn, which computes only its new tokens. The copies are
 * priced as every other copy (calls × dispatch + bytes / bandwidth); the twin waits for them.
 */
export class PrefixTurns {
  private turnEndOutMs = 0;
  private pending: Array<{ readonly seq: Seq; readonly blocks: number }> = [];

  constructor(private readonly d: PrefixTurnsDeps) {}

  /** Turn-end copies not yet waited for: the next iteration stalls for them. */
  takeTurnEndStall(): number {
    const ms = this.turnEndOutMs;
    this.turnEndOutMs = 0;
    return ms;
  }

  /**
   * A turn ended with more to come: its KV is copied to host before its blocks go (with reuse, only
   * the blocks the conversation's copy lacks; vLLM copies them all). Where the host has no room the
   * next turn recomputes.
   */
  keep(s: Seq): void {
    const { config: c, host, out } = this.d;
    const held = c.mechanisms.reuse ? host.get(s.conv) : undefined;
    const from = reusedSwapBlocks(held, s.tokens);
    if (!host.makeRoom(s.conv, s.blocks.length, this.d.busyConversations)) return host.drop(s.conv);
    const calls = this.d.calls(s.blocks, from);
    out.swapOuts++;
    out.swapOutBlocks += s.blocks.length - from;
    out.swapOutCalls += calls;
    out.reusedBlocks += from;
    this.d.count(s.blocks.length - from, calls);
    host.record(s.conv, s.tokens);
    this.turnEndOutMs += transferMs(c.link, calls, (s.blocks.length - from) * this.d.blockBytes);
  }

  /** The history tokens `s` starts from (its host copy's, if the copy is still there), queued for this iteration's swap-in. */
  restore(s: Seq): number {
    const prefix = Math.min(s.prefixTokens, this.d.host.get(s.conv) ?? 0);
    s.prefixTokens = 0;
    if (prefix <= 0) return 0;
    this.pending.push({ seq: s, blocks: blocksFor(prefix) });
    this.d.out.prefixRestores++;
    this.d.out.prefixRestoredTokens += prefix;
    return prefix;
  }

  /**
   * This iteration's queued swap-ins as one copy (null: none), synchronous in both systems: the
   * prefill needs them. vLLM frees its CPU copy on swap-in; with reuse the copy stays for the turn's end.
   */
  takeSwapIn(): { readonly blocks: number; readonly ms: number } | null {
    if (this.pending.length === 0) return null;
    const { config: c, host, out } = this.d;
    let calls = 0,
      blocks = 0;
    for (const { seq, blocks: n } of this.pending) {
      const k = this.d.calls(seq.blocks.slice(0, n), 0);
      calls += k;
      blocks += n;
      this.d.count(n, k);
      if (!c.mechanisms.reuse) host.drop(seq.conv);
    }
    out.swapIns += this.pending.length;
    out.swapInBlocks += blocks;
    this.pending = [];
    return { blocks, ms: transferMs(c.link, calls, blocks * this.d.blockBytes) };
  }
}
