import { attentionChunkPairs, NodeCostMeters } from '@mnemo/kv-core';
import { metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';

/** Where one prompt's KV came from in a prefill pass, tokens (the restore plan's sources; none restored: zeros). */
export interface PassSeq {
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly restored?: { readonly host: number; readonly ssd: number; readonly peer: number };
}

/** A sequence as the batch loop holds it, as far as its pass's measurement reads it. */
export interface PassedSeq {
  readonly request: { readonly tokens: readonly number[] };
  readonly cachedTokens: number;
  readonly restored?: PassSeq['restored'];
  readonly firstTokenMs?: number;
}

/**
 * This node's costs per chunk as it measures them from its own prefill passes, and how often its
 * full batch frees a slot (kv-core NodeCostMeters), for its heartbeats: the scheduler prices the
 * node with them. Exported as `mnemo_node_measured_cost_ms{term}`.
 */
export class PassCosts extends NodeCostMeters {
  constructor(metrics?: ServiceMetrics, maxBatch = 1, attentionShare?: number) {
    super(maxBatch, attentionShare);
    if (!metrics) return;
    const costs = () => this.costs();
    metricBuilders(metrics.registry).sampledBy(
      'mnemo_node_measured_cost_ms',
      "This node's costs per 256-token chunk as it measured them from its prefill passes and reports to the scheduler: " +
        'recompute, attention (per chunk of context a computed chunk attends over), host and ssd (restore), peer (pull), ' +
        'and slot (how often a full batch frees a slot); absent until measured',
      ['term'],
      () => {
        const c = costs();
        const terms: Array<[string, number | undefined]> = [
          ['recompute', c.recomputeMsPerChunk],
          ['attention', c.attentionMsPerChunkPair],
          ['host', c.loadMsPerChunk?.host],
          ['ssd', c.loadMsPerChunk?.ssd],
          ['peer', c.peerMsPerChunk],
          ['slot', c.slotMs],
        ];
        return terms.flatMap(([term, v]) => (v === undefined ? [] : [[{ term }, v] as const]));
      },
    );
  }

  /**
   * A prefill pass of these sequences took `ms`: a measurement when every one got its first token
   * (a failed or requeued pass is not), their restores' sources read from each.
   */
  passOf(seqs: readonly PassedSeq[], ms: number): void {
    if (!seqs.every((s) => s.firstTokenMs !== undefined)) return;
    this.prefillPass(
      seqs.map((s) => ({
        promptTokens: s.request.tokens.length,
        cachedTokens: s.cachedTokens,
        ...(s.restored ? { restored: s.restored } : {}),
      })),
      ms,
    );
  }

  /** A prefill pass took `ms` for these prompts (those whose first token came; a failed pass is not a measurement). */
  prefillPass(seqs: readonly PassSeq[], ms: number): void {
    if (seqs.length === 0) return;
    let [computed, host, ssd, peer, pairs] = [0, 0, 0, 0, 0];
    for (const s of seqs) {
      computed += Math.max(0, s.promptTokens - s.cachedTokens);
      pairs += attentionChunkPairs(s.promptTokens, s.cachedTokens);
      host += s.restored?.host ?? 0;
      ssd += s.restored?.ssd ?? 0;
      peer += s.restored?.peer ?? 0;
    }
    this.pass({ ms, computedTokens: computed, hostTokens: host, ssdTokens: ssd, peerTokens: peer, attentionChunkPairs: pairs });
  }
}
