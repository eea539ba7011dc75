import { Inject, Injectable } from '@nestjs/common';
import { classifyBeat, type MeasuredCosts } from '@mnemo/kv-core';
import { isSubjectToken, type MeasuredCosts as MeasuredCostsWire } from '@mnemo/proto';
import { CLOCK, JsonLogger, type Clock } from '@mnemo/service-kit';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { NodeRegistry } from './node.registry.js';
import type { RecordHeartbeatCommand } from './record-heartbeat.command.js';

/**
 * Registers or refreshes a node. Liveness uses the scheduler's own clock at arrival, never the
 * node's timestamp, so clock skew between machines cannot keep a dead node alive.
 * A heartbeat with `accepting = false` is a goodbye: the node leaves routing at once. One under a
 * new boot id is a restarted node (kv-core `classifyBeat`): the old incarnation leaves as down
 * (NODE_DOWN, so gateways move its requests) and the new one joins.
 */
@Injectable()
export class RecordHeartbeatUseCase {
  constructor(
    @Inject(NodeRegistry) private readonly registry: NodeRegistry,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(SchedulerMetrics) private readonly metrics: SchedulerMetrics,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  execute({ heartbeat: hb }: RecordHeartbeatCommand): void {
    if (!isSubjectToken(hb.nodeId)) {
      this.logger.emit('warn', 'heartbeat with an invalid node id ignored', { nodeId: hb.nodeId });
      return;
    }
    const known = this.registry.get(hb.nodeId);
    const verdict = classifyBeat(known && { bootId: known.bootId ?? '' }, hb);
    if (verdict.oldDown && this.registry.remove(hb.nodeId, 'restarted')) {
      this.metrics.nodesDropped.inc({ reason: 'restarted' });
      this.logger.emit('warn', 'node restarted: its old incarnation is down', {
        nodeId: hb.nodeId,
        oldBootId: known!.bootId,
        bootId: hb.bootId,
      });
    }
    if (verdict.membership === 'none') return;
    if (verdict.membership === 'leave') {
      if (this.registry.remove(hb.nodeId, 'goodbye')) {
        this.metrics.nodesDropped.inc({ reason: 'left' });
        this.logger.emit('info', 'node left', { nodeId: hb.nodeId });
      }
      return;
    }
    const isNew = this.registry.upsert({
      nodeId: hb.nodeId,
      models: hb.models.map((m) => m.id),
      modelInfos: hb.models.map((m) => ({
        id: m.id,
        engine: m.engine,
        maxContext: m.maxContext,
        vocabSize: m.vocabSize,
        tokenizer: m.tokenizer,
        tokenizerSha256: m.tokenizerSha256,
      })),
      running: hb.running,
      waiting: hb.waiting,
      kvUsage: hb.kvUsage,
      grpcAddress: hb.grpcAddress,
      bootId: hb.bootId,
      ssdBackend: hb.ssdBackend,
      ...(hb.costs ? { costs: measuredCosts(hb.costs) } : {}),
      ...(hb.maxBatch > 0 ? { maxBatch: hb.maxBatch } : {}),
      // Every heartbeat sets it (0: no pass in flight), so an old one never lingers; nonsense reads as none.
      prefillBusyMs: Number.isFinite(hb.prefillBusyMs) && hb.prefillBusyMs > 0 ? Math.min(hb.prefillBusyMs, 600_000) : 0,
      lastSeenMs: this.clock.monotonicMs(),
    });
    if (isNew)
      this.logger.emit('info', 'node joined', { nodeId: hb.nodeId, models: hb.models.map((m) => m.id), grpcAddress: hb.grpcAddress });
  }
}

/** The heartbeat's measured costs as routing takes them: a figure routing could not use (negative, not finite) is left out. */
export function measuredCosts(w: MeasuredCostsWire): MeasuredCosts {
  const ok = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x) && x >= 0;
  const load = { ...(ok(w.hostMsPerChunk) ? { host: w.hostMsPerChunk } : {}), ...(ok(w.ssdMsPerChunk) ? { ssd: w.ssdMsPerChunk } : {}) };
  return {
    ...(ok(w.recomputeMsPerChunk) ? { recomputeMsPerChunk: w.recomputeMsPerChunk } : {}),
    ...(ok(w.attentionMsPerChunkPair) ? { attentionMsPerChunkPair: w.attentionMsPerChunkPair } : {}),
    ...(Object.keys(load).length > 0 ? { loadMsPerChunk: load } : {}),
    ...(ok(w.peerMsPerChunk) ? { peerMsPerChunk: w.peerMsPerChunk } : {}),
    ...(ok(w.slotMs) ? { slotMs: w.slotMs } : {}),
  };
}
