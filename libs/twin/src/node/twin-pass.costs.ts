import { attentionChunkPairs, NodeCostMeters, type MeasuredCosts, type StartingSeq } from '@mnemo/kv-core';
import type { PassLoad } from './restore-pass.js';
import { PeerRestore, TierRestore } from './twin-restores.js';
import type { TwinSeq } from './twin-seq.js';

/**
 * A twin node's own costs per chunk, learnt from its prefill passes as a live node learns them
 * (kv-core NodeCostMeters, as node-manager PassCosts keeps them), for its heartbeats: the twin's scheduler
 * prices the node with them as the live one does; and how often its full batch frees a slot.
 */
export class TwinPassCosts {
  private readonly meters: NodeCostMeters;

  constructor(maxBatch: number) {
    this.meters = new NodeCostMeters(maxBatch);
  }

  /** A pass of `seqs` that took `ms` and read `loads`. */
  observe(seqs: readonly TwinSeq[], loads: readonly PassLoad[], ms: number): void {
    let [computed, pairs] = [0, 0];
    for (const s of seqs) {
      computed += Math.max(0, s.request.tokens.length - s.cachedTokens);
      pairs += attentionChunkPairs(s.request.tokens.length, s.cachedTokens);
    }
    let [host, ssd, peer] = [0, 0, 0];
    for (const l of loads) {
      if (l instanceof TierRestore) {
        host += l.tokensByTier.mem;
        ssd += l.tokensByTier.ssd;
      } else if (l instanceof PeerRestore) peer += Math.max(0, l.until - l.from);
    }
    this.meters.pass({ ms, computedTokens: computed, hostTokens: host, ssdTokens: ssd, peerTokens: peer, attentionChunkPairs: pairs });
  }

  /** A prefill pass starts: its expected time, for the heartbeats' prefillBusyMs (as the live node's PassCosts). */
  passStarted(seqs: readonly StartingSeq[], nowMs: number): void {
    this.meters.passStarted(seqs, nowMs);
  }

  passEnded(): void {
    this.meters.passEnded();
  }

  prefillBusyMs(nowMs: number): number {
    return this.meters.prefillBusyMs(nowMs);
  }

  /** A sequence left the batch after `residencyMs` in it (its first token to its last). */
  finished(residencyMs: number): void {
    this.meters.sequenceFinished(residencyMs);
  }

  costs(): MeasuredCosts {
    return this.meters.costs();
  }
}
