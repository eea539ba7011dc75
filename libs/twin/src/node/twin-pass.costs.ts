import { attentionChunkPairs, NodeCostMeters } from '@mnemo/kv-core';
import type { PassLoad } from './restore-pass.js';
import { PeerRestore, TierRestore } from './twin-restores.js';
import type { TwinSeq } from './twin-seq.js';

/**
 * A twin node's own costs per chunk, learnt from its prefill passes as a live node learns them
 * (kv-core NodeCostMeters, as node-manager PassCosts keeps them), for its heartbeats: the twin's scheduler
 * prices the node with them as the live one does; and how often its full batch frees a slot.
 */
export class TwinPassCosts extends NodeCostMeters {
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
    this.pass({ ms, computedTokens: computed, hostTokens: host, ssdTokens: ssd, peerTokens: peer, attentionChunkPairs: pairs });
  }
}
