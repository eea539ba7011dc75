import { attentionChunkPairs, NodeCostMeters, type MeasuredCosts, type StartingSeq } from '@mnemo/kv-core';
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
export class PassCosts {
  private readonly meters: NodeCostMeters;

  constructor(metrics?: ServiceMetrics, maxBatch = 1) {
    this.meters = new NodeCostMeters(maxBatch);
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

  /** Prefill passes measured so far. */
  get passes(): number {
    return this.meters.passes;
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
    this.meters.pass({ ms, computedTokens: computed, hostTokens: host, ssdTokens: ssd, peerTokens: peer, attentionChunkPairs: pairs });
  }

  /** A prefill pass of these prompts starts at `nowMs` (monotonic): its expected time, for the heartbeat. */
  passStarted(seqs: readonly StartingSeq[], nowMs: number): void {
    this.meters.passStarted(seqs, nowMs);
  }

  passEnded(): void {
    this.meters.passEnded();
  }

  /** Expected time left of the prefill pass in flight at `nowMs` (monotonic), ms; 0 with none. */
  prefillBusyMs(nowMs: number): number {
    return this.meters.prefillBusyMs(nowMs);
  }

  /** A sequence left the batch after `residencyMs` in it (its first token to its last). */
  sequenceFinished(residencyMs: number): void {
    this.meters.sequenceFinished(residencyMs);
  }

  costs(): MeasuredCosts {
    return this.meters.costs();
  }
}
