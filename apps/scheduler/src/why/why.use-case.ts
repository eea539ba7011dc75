import { Inject, Injectable } from '@nestjs/common';
import { create } from '@bufbuild/protobuf';
import { explainKv, type ChunkDropFact, type KvSegment } from '@mnemo/kv-core';
import {
  CandidateEstimateSchema,
  ChunkSourceSchema,
  KvExplanationSchema,
  type KvExplanation,
  type NodeKvRecord,
  type WhyRequest,
} from '@mnemo/proto';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { WHY_RECORDS, NODE_WHY_CLIENT, type NodeWhyClient } from './why.ports.js';
import type { RoutingRecords } from './routing.records.js';

/** The answer to a why question: an explanation, or not found (unknown, aged out, or another tenant's: one answer). */
export type WhyOutcome = { readonly kind: 'explained'; readonly explanation: KvExplanation } | { readonly kind: 'not_found' };

/**
 * `why` for one request: the routing record (every replica holds the newest of each request), the node's record of what it served
 * (asked over NATS; a node that is gone leaves the sources unknown), combined by kv-core
 * `explainKv`. A request of another tenant is `not_found`, the same answer as an unknown one.
 */
@Injectable()
export class WhyUseCase {
  constructor(
    @Inject(WHY_RECORDS) private readonly records: RoutingRecords,
    @Inject(NODE_WHY_CLIENT) private readonly nodes: NodeWhyClient,
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
  ) {}

  async execute(q: WhyRequest): Promise<WhyOutcome> {
    const r = this.records.records.get(q.requestId);
    if (!r || (r.tenant !== q.tenant && !q.admin)) return { kind: 'not_found' };
    const node: NodeKvRecord | null = await this.nodes.ask(r.nodeId, r.requestId, r.chunkKeys);
    const drops = new Map<string, ChunkDropFact[]>();
    for (const d of node?.drops ?? [])
      drops.set(d.key, [
        ...(drops.get(d.key) ?? []),
        { reason: d.reason as ChunkDropFact['reason'], tier: d.tier, policy: d.policy, atUnixMs: Number(d.atUnixMs) },
      ]);
    const facts = node?.found
      ? {
          deviceTokens: node.deviceTokens,
          host: node.hostTokens,
          ssd: node.ssdTokens,
          peer: node.peerTokens,
          ...(node.peerAddress ? { peerNode: node.peerAddress } : {}),
          ...(node.droidspeakBase ? { droidspeak: { base: node.droidspeakBase, tokens: node.droidspeakTokens } } : {}),
        }
      : null;
    const segments = explainKv({
      promptTokens: r.promptTokens,
      chunkKeys: r.chunkKeys,
      nodeId: r.nodeId,
      policy: this.config.SCHEDULER_POLICY!,
      node: facts,
      routing: r.chunks.map((c, i) => ({ ...c, drops: (drops.get(r.chunkKeys[i]!) ?? []).sort((a, b) => a.atUnixMs - b.atUnixMs) })),
      admin: q.admin,
    });
    return {
      kind: 'explained',
      explanation: create(KvExplanationSchema, {
        requestId: r.requestId,
        model: r.model,
        nodeId: r.nodeId,
        policy: this.config.SCHEDULER_POLICY!,
        attempt: r.attempt,
        promptTokens: r.promptTokens,
        cachedTokens: node?.found ? node.cachedTokens : 0,
        chunks: segments.map(toProto),
        scheduledUnixMs: BigInt(r.atUnixMs),
        nodeRecord: Boolean(node?.found),
        routeReason: r.route?.reason ?? '',
        estimateMs: r.route?.estimateMs ?? 0,
        candidates: (r.route?.candidates ?? []).map((c) => create(CandidateEstimateSchema, { ...c })),
        admittedUnixMs: node?.found ? node.admittedUnixMs : 0n,
        firstTokenUnixMs: node?.found ? node.firstTokenUnixMs : 0n,
      }),
    };
  }
}

function toProto(s: KvSegment) {
  return create(ChunkSourceSchema, {
    index: s.chunk,
    start: s.start,
    tokens: s.tokens,
    key: s.key,
    source: s.source,
    reason: s.reason ?? '',
    detail: s.detail,
    tier: s.tier ?? '',
    policy: s.policy ?? '',
    atUnixMs: BigInt(s.atUnixMs ?? 0),
    otherNode: s.otherNode ?? '',
    otherModel: s.otherModel ?? '',
  });
}
