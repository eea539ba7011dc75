import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Engine } from '@mnemo/engine';
import { encodeMessage, HeartbeatSchema, Subjects } from '@mnemo/proto';
import { NATS_CONNECTION } from '@mnemo/service-kit';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { SequenceStore } from '../batching/sequence.store.js';
import { BatchScheduler } from '../batching/batch.scheduler.js';
import { ChunkTransferGrpcServer } from '../chunks/chunk-transfer.grpc-server.js';
import { CLOCK, type Clock } from '@mnemo/service-kit';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import { ServedTokenizers } from '../tokenizers/served-tokenizers.js';
import { SSD_BACKEND } from '../kv-store/pool.devices.js';
import { PassCosts } from '../shared/pass.costs.js';

/**
 * Publishes this node's liveness and load on HEARTBEAT. The first one registers the node;
 * one with `accepting = false` takes it out of routing before it stops. kv_usage is the
 * engine's device KV occupancy, which least-loaded routing weighs against queue length. Each
 * model carries its tokenizer kind and bundle hash, which gateways fetch on tokenizerSubject.
 * ssd_backend says whether the SSD pools run io_uring or the pread fallback (`mnemo status`); costs
 * are what the node measured of itself (PassCosts), which the scheduler prices it with, and
 * prefill_busy_ms the prefill it has in hand: the pass in flight and its waiting requests' prefill
 * (BatchScheduler.queuedPrefill).
 */
@Injectable()
export class PublishHeartbeatUseCase {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(SequenceStore) private readonly store: SequenceStore,
    @Inject(NODE_CONFIG) private readonly config: NodeManagerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(NodeLifecycle) private readonly lifecycle: NodeLifecycle,
    @Inject(ChunkTransferGrpcServer) private readonly grpc: ChunkTransferGrpcServer,
    @Inject(ServedTokenizers) private readonly tokenizers: ServedTokenizers,
    @Inject(SSD_BACKEND) private readonly ssdBackend: string,
    @Inject(PassCosts) private readonly passCosts: PassCosts,
    @Inject(BatchScheduler) private readonly batch: BatchScheduler,
  ) {}

  /** What this node measured of its costs, as the heartbeat carries it. */
  private costs() {
    const c = this.passCosts.costs();
    return {
      recomputeMsPerChunk: c.recomputeMsPerChunk,
      attentionMsPerChunkPair: c.attentionMsPerChunkPair,
      hostMsPerChunk: c.loadMsPerChunk?.host,
      ssdMsPerChunk: c.loadMsPerChunk?.ssd,
      peerMsPerChunk: c.peerMsPerChunk,
      slotMs: c.slotMs,
      passes: this.passCosts.passes,
    };
  }

  execute(): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(
      Subjects.HEARTBEAT,
      encodeMessage(HeartbeatSchema, {
        nodeId: this.config.NODE_ID,
        models: this.engine.models().map((m) => ({
          id: m.id,
          engine: m.engine,
          maxContext: m.maxContext,
          vocabSize: m.vocabSize,
          ...this.tokenizers.describe(m.id),
        })),
        running: this.store.count('running'),
        waiting: this.store.count('waiting'),
        kvUsage: this.engine.kvUsage(),
        grpcAddress: this.grpc.address,
        sentUnixMs: this.clock.unixMs(),
        accepting: this.lifecycle.accepting,
        bootId: this.lifecycle.bootId,
        ssdBackend: this.ssdBackend,
        costs: this.costs(),
        maxBatch: this.config.NODE_MAX_BATCH,
        prefillBusyMs: this.passCosts.prefillBusyMs(this.clock.monotonicMs(), this.batch.queuedPrefill()),
      }),
    );
  }
}
