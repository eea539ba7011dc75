import { Module, type DynamicModule } from '@nestjs/common';
import type { Engine } from '@mnemo/engine';
import type { NatsConnection } from '@nats-io/transport-node';
import { CLOCK, JsonLogger, NATS_CONNECTION, NatsModule, ServiceMetrics, systemClock, type Clock } from '@mnemo/service-kit';
import { BatchingModule } from '../batching/batching.module.js';
import { ChunksModule } from '../chunks/chunks.module.js';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE, engineAttentionShare } from '../engine/engine.factory.js';
import { HeartbeatModule } from '../heartbeat/heartbeat.module.js';
import { InferenceModule } from '../inference/inference.module.js';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import { PrefetchModule } from '../prefetch/prefetch.module.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { PassCosts } from '../shared/pass.costs.js';
import { NO_PROMPT_STORE, PROMPT_STORE, type PromptStore } from '../kv-store/prompt-store.port.js';
import { SSD_BACKEND } from '../kv-store/pool.devices.js';
import { CHUNK_STORE, NO_CHUNK_STORE, type ChunkStore } from '../kv-store/chunk-store.port.js';
import { ChunkPeerClient } from '../peers/chunk-peer.client.js';
import { CROSS_MODEL_REUSE, NO_CROSS_MODEL, type CrossModelPort } from '../droidspeak/cross-model.reuse.js';
import { NO_SESSION_TAILS, SESSION_TAILS, type SessionTailsPort } from '../kv-events/session.tails.js';

/** The KV side the services use: prompts' restore source, the local tiers for peers, the peer client. */
export interface NodeStores {
  readonly prompts: PromptStore;
  readonly chunks: ChunkStore;
  readonly peers: ChunkPeerClient;
  /** DroidSpeak cross-model reuse of a derived model's prompt over its base's KV; absent: none. */
  readonly crossModel?: CrossModelPort;
  /** Reports what each session's request left here (KV events); absent: none. */
  readonly sessionTails?: SessionTailsPort;
  /** Each request's KV record and trace spans (`why`); absent: none kept. */
  readonly recorder?: KvRecorder;
  /** The SSD pools' I/O backend the heartbeat reports (PoolReport.ssdBackend); absent or '': no SSD pool. */
  readonly ssdBackend?: string;
}
import { ServedTokenizers } from '../tokenizers/served-tokenizers.js';
import { TokenizersModule } from '../tokenizers/tokenizers.module.js';
import { KV_RECORDER, NO_KV_RECORDER, type KvRecorder } from '../why/kv.recorder.js';
import { WhyNatsHandler } from '../why/why.nats-handler.js';

/**
 * Root module: process-wide singletons (config, logger, metrics, clock, the engine, the NATS connection) are made
 * here and shared globally. The engine is built before Nest starts so a model it cannot serve
 * is reported as a configuration error before anything connects.
 */
@Module({})
export class AppModule {
  static forRoot(
    config: NodeManagerConfig,
    logger: JsonLogger,
    metrics: ServiceMetrics,
    engine: Engine,
    tokenizers: ServedTokenizers,
    nats: NatsConnection,
    stores: NodeStores = { prompts: NO_PROMPT_STORE, chunks: NO_CHUNK_STORE, peers: new ChunkPeerClient() },
    clock: Clock = systemClock,
  ): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [NatsModule, BatchingModule, InferenceModule, ChunksModule, PrefetchModule, HeartbeatModule, TokenizersModule],
      providers: [
        { provide: NODE_CONFIG, useValue: config },
        { provide: JsonLogger, useValue: logger },
        { provide: ServiceMetrics, useValue: metrics },
        { provide: NodeMetrics, useValue: new NodeMetrics(metrics) },
        { provide: PassCosts, useValue: new PassCosts(metrics, config.NODE_MAX_BATCH, engineAttentionShare(config)) },
        { provide: CLOCK, useValue: clock },
        { provide: ENGINE, useValue: engine },
        { provide: ServedTokenizers, useValue: tokenizers },
        { provide: NATS_CONNECTION, useValue: nats },
        { provide: PROMPT_STORE, useValue: stores.prompts },
        { provide: CHUNK_STORE, useValue: stores.chunks },
        { provide: ChunkPeerClient, useValue: stores.peers },
        { provide: CROSS_MODEL_REUSE, useValue: stores.crossModel ?? NO_CROSS_MODEL },
        { provide: SESSION_TAILS, useValue: stores.sessionTails ?? NO_SESSION_TAILS },
        { provide: KV_RECORDER, useValue: stores.recorder ?? NO_KV_RECORDER },
        { provide: SSD_BACKEND, useValue: stores.ssdBackend ?? '' },
        ...(stores.recorder ? [WhyNatsHandler] : []),
        NodeLifecycle,
      ],
      exports: [
        NODE_CONFIG,
        JsonLogger,
        ServiceMetrics,
        NodeMetrics,
        PassCosts,
        CLOCK,
        ENGINE,
        ServedTokenizers,
        NATS_CONNECTION,
        PROMPT_STORE,
        CHUNK_STORE,
        ChunkPeerClient,
        CROSS_MODEL_REUSE,
        SESSION_TAILS,
        KV_RECORDER,
        SSD_BACKEND,
        NodeLifecycle,
      ],
    };
  }
}
