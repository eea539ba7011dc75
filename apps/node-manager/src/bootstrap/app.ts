import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import {
  connectServiceNats,
  JsonLogger,
  listenOrCleanUp,
  NatsEndpoints,
  OpsServer,
  ServiceMetrics,
  systemClock,
  type LogLevel,
  type RepeatingTask,
} from '@mnemo/service-kit';
import { AppModule } from './app.module.js';
import { BatchScheduler } from '../batching/batch.scheduler.js';
import { SequenceStore } from '../batching/sequence.store.js';
import { loadNodeManagerConfig } from '../config/node-manager.config.js';
import { ChunkTransferGrpcServer } from '../chunks/chunk-transfer.grpc-server.js';
import { createEngine, syntheticBase } from '../engine/engine.factory.js';
import { LayerStreamMetrics } from '../engine/layer-stream.metrics.js';
import { HEARTBEAT_TASK } from '../heartbeat/heartbeat.module.js';
import { PublishHeartbeatUseCase } from '../heartbeat/publish-heartbeat.use-case.js';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { KvEventsPublisher } from '../kv-events/kv-events.publisher.js';
import { SessionTails } from '../kv-events/session.tails.js';
import { KvStore } from '../kv-store/kv.store.js';
import { KvStoreMetrics } from '../kv-metrics/kv-store.metrics.js';
import { ServedTokenizers } from '../tokenizers/served-tokenizers.js';
import { NO_CHUNK_STORE } from '../kv-store/chunk-store.port.js';
import { NO_PROMPT_STORE } from '../kv-store/prompt-store.port.js';
import { ChunkPeerClient } from '../peers/chunk-peer.client.js';
import { PeerAwarePromptStore } from '../peers/peer-aware.prompt-store.js';
import { PeerMetrics } from '../peers/peer.metrics.js';
import { CrossModelReuse } from '../droidspeak/cross-model.reuse.js';
import { DroidSpeakMetrics } from '../droidspeak/droidspeak.metrics.js';
import { eCacheModel, ECacheTier } from '../droidspeak/e-cache.tier.js';
import { ReusePlanCache } from '../droidspeak/reuse-plan.cache.js';
import { startVllmEvents, type VllmEventsHandle } from '../interop/vllm-events.wiring.js';
import type { HoldingChange } from '@mnemo/kv-core';
import { nodeInferSubject } from '@mnemo/proto';
import { BoundedRecords, tracerFor } from '@mnemo/service-kit';
import { DropLog } from '../why/drop.log.js';
import { KvRecorder } from '../why/kv.recorder.js';

export interface NodeManagerHandle {
  readonly nodeId: string;
  /** host:port of the ChunkTransfer gRPC server (advertised in heartbeats). */
  readonly grpcAddress: string;
  /** Port of /metrics, /healthz, /readyz (useful with METRICS_PORT=0). */
  readonly metricsPort: number;
  /** The vLLM-format KV event endpoints, when NODE_VLLM_EVENTS is on. */
  readonly vllmEvents?: { readonly endpoint: string; readonly replayEndpoint?: string };
  /** Graceful: leave routing, finish running requests (up to NODE_DRAIN_TIMEOUT_MS), drain NATS. */
  stop(): Promise<void>;
  /** Like a crash, for tests: heartbeats stop and the connection drops with no goodbye. */
  kill(): Promise<void>;
}

/**
 * Boots a node-manager: validates the environment (throws ConfigError listing every problem),
 * builds the engine (NODE_ENGINE), connects to NATS, starts the continuous-batching loop,
 * answers its infer/cancel subjects, serves ChunkTransfer over gRPC and heartbeats its models,
 * load and gRPC address.
 */
export async function startNodeManager(env: Readonly<Record<string, string | undefined>> = process.env): Promise<NodeManagerHandle> {
  const config = loadNodeManagerConfig(env, syntheticBase);
  const logger = new JsonLogger('node-manager', config.LOG_LEVEL as LogLevel);
  const metrics = new ServiceMetrics('node-manager');
  const engine = await createEngine(config);
  const tokenizers = await ServedTokenizers.load(config.NODE_MODELS!).catch(async (e: unknown) => {
    await engine.close();
    throw e;
  });
  const nats = await connectServiceNats(config, `node-manager ${config.NODE_ID}`, `node.${config.NODE_ID}`).catch(async (e: unknown) => {
    await engine.close();
    throw e;
  });
  if (engine.layerStream)
    new LayerStreamMetrics(
      metrics,
      engine.models().map((m) => m.id),
      engine.layerStream,
    );
  const events = new KvEventsPublisher(nats, config.NODE_ID, config.kvStore.eventsMs);
  let vllm: VllmEventsHandle | null = null;
  try {
    vllm = await startVllmEvents(config, engine, metrics, logger);
  } catch (e) {
    await nats.close();
    await engine.close();
    throw e;
  }
  // `why`: each request's KV record, and why chunks left a tier.
  const recorder = new KvRecorder(
    new BoundedRecords(config.NODE_WHY_RECORDS!, config.NODE_WHY_TTL_MS!),
    new DropLog(config.NODE_WHY_DROPS!, config.NODE_WHY_TTL_MS!),
    tracerFor('node-manager'),
  );
  const TIER = { device: 'device', mem: 'host', ssd: 'ssd' } as const;
  // Every change goes out on NATS and, when on, in vLLM's format too.
  const holdingChanged = (c: HoldingChange) => {
    events.add(c);
    vllm?.bridge.onChange(c);
    if (c.kind !== 'stored') for (const k of c.keys) recorder.drops.removed(k, TIER[c.tier], c.kind === 'truncated');
  };
  // DroidSpeak E caches live in the tiers as one tier-only model per base (registered at open, so a restart replays their journal).
  const ds = config.droidSpeak;
  const eBases = ds.enabled && ds.eCaches ? [...new Set(ds.bases.values())] : [];
  const eModels = new Map(
    eBases.flatMap((b) => {
      const m = eCacheModel(b, engine.hiddenSize?.(b));
      return m ? [[b, m] as const] : [];
    }),
  );
  const kvStore = await KvStore.open(config.kvStore, engine, holdingChanged, (level, msg, fields) => logger.emit(level, msg, fields), [
    ...eModels.values(),
  ]).catch(async (e: unknown) => {
    await nats.close();
    await engine.close();
    throw e;
  });
  if (kvStore) {
    kvStore.tiers.onDrop = (key, tier, reason) => recorder.drops.because(key, tier === 'mem' ? 'host' : 'ssd', reason);
    kvStore.promotion.enabled = config.NODE_PREFETCH_PROMOTE !== 'off';
    const { report, replays } = kvStore;
    // The I/O path in use (io_uring or the pread fallback, and why) is said once, here.
    logger.emit('info', 'KV store ready', {
      io: report.io,
      ssdBackend: report.ssdBackend || 'none',
      devices: report.devices,
      dataDir: config.kvStore.dataDir,
      journals: replays,
    });
    if (report.ssdBackend.includes('pread'))
      logger.emit('warn', 'SSD pools run the pread/pwrite fallback, one request at a time', {
        io: report.io,
        fix:
          'NODE_KV_IO_BACKEND=auto, and an addon built with liburing: ' +
          'apt-get install -y liburing-dev, then node scripts/build-native.mjs',
      });
    const storeMetrics = new KvStoreMetrics(metrics, kvStore, events);
    kvStore.onBlocked = (ms) => storeMetrics.blockedIo.observe(ms / 1000);
    // Swap copies and the host pool are one host copy: a swap-out leaves out what the pool keeps.
    engine.swap?.useHostCopies?.({ hold: (model, salt, tokens) => kvStore.holdForSwap(model, salt, tokens) });
  } else
    logger.emit('info', 'KV store off', {
      reason: config.kvStore.enabled ? `the ${engine.kind} engine keeps no KV bytes` : 'NODE_KV_STORE=off',
    });
  // Without a store (the sim engine) the device cache is still what routing wants to know about.
  const unwatchDevice = kvStore
    ? () => undefined
    : engine.watchChunks((e) => {
        // A partial chunk leaves the device with its sequence: the device holds whole chunks by name only.
        if (e.kind !== 'partial')
          holdingChanged({ kind: e.kind === 'evicted' ? 'removed' : 'stored', tier: 'device', model: e.model, keys: [e.key] });
      });
  events.answerReports((e) => logger.emit('warn', 'KV report request failed', { err: String(e) }));
  const sessionTails = new SessionTails((t) => events.addSessionTail(t));
  const unwatchTails = engine.watchChunks((e) => sessionTails.onChunk(e));
  const peers = new ChunkPeerClient({
    timeoutMs: config.NODE_PEER_TIMEOUT_MS,
    deadlineBaseMs: config.NODE_PEER_DEADLINE_BASE_MS,
    ...(config.NODE_PEER_TOKEN ? { token: config.NODE_PEER_TOKEN } : {}),
    ...(config.peerTls ? { tls: config.peerTls } : {}),
  });
  const prompts = kvStore ? new PeerAwarePromptStore(kvStore, kvStore, peers) : NO_PROMPT_STORE;
  new PeerMetrics(metrics, peers, prompts instanceof PeerAwarePromptStore ? prompts : undefined, kvStore);
  // DroidSpeak: only when this node serves a derived model with its base and keeps KV bytes.
  const planCache =
    ds.enabled && ds.bases.size > 0 && kvStore
      ? new ReusePlanCache(nats, systemClock, {
          requestTimeoutMs: ds.planTimeoutMs,
          missTtlMs: 60_000,
          onFetchError: (e) => logger.emit('warn', 'DroidSpeak frontier fetch failed', { err: String(e) }),
        })
      : undefined;
  planCache?.start();
  let waiting = () => 0;
  const eCaches =
    planCache && kvStore && eModels.size > 0
      ? new ECacheTier(kvStore, peers, (b) => (eModels.has(b) ? engine.hiddenSize?.(b) : undefined))
      : undefined;
  const crossModel = planCache
    ? new CrossModelReuse(
        ds,
        planCache,
        prompts,
        (m) => engine.kvLayout(m)?.layers,
        () => waiting(),
        systemClock,
        new DroidSpeakMetrics(metrics, () => eCaches?.hostBytes(eModels.keys()) ?? 0),
        eCaches,
      )
    : undefined;
  const stores = {
    prompts,
    chunks: kvStore ?? NO_CHUNK_STORE,
    peers,
    sessionTails,
    recorder,
    ssdBackend: kvStore?.report.ssdBackend ?? '',
    ...(crossModel ? { crossModel } : {}),
  };
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger, metrics, engine, tokenizers, nats, stores), {
    logger,
    abortOnError: false,
  }).catch(async (e: unknown) => {
    peers.close();
    await kvStore?.close();
    await vllm?.close();
    await nats.close();
    await engine.close();
    throw e;
  });
  const store = app.get(SequenceStore);
  waiting = () => store.count('waiting');
  app.get(NodeMetrics).observe({
    running: () => store.count('running'),
    waiting: () => store.count('waiting'),
    paused: () => store.all().filter((s) => s.paused).length,
    kvUsage: () => engine.kvUsage(),
  });
  const scheduler = app.get(BatchScheduler);
  scheduler.start();
  const endpoints = app.get(NatsEndpoints);
  const ops = new OpsServer(
    metrics,
    () => endpoints.listening && app.get(NodeLifecycle).accepting,
    () =>
      (kvStore?.tiers.journalHealth() ?? [])
        .filter((h) => h.state === 'failing')
        .map((h) => ({
          check: `kv_journal:${h.model}`,
          message: `SSD journal writes fail (${h.lastError}); ${h.pending} records kept and retried`,
        })),
  );
  const metricsPort = await listenOrCleanUp(ops, config.METRICS_PORT!, config.METRICS_HOST!, async () => {
    await scheduler.stop();
    await app.close();
    await kvStore?.close();
    await vllm?.close();
    await engine.close();
  });
  logger.emit('info', 'node-manager ready', {
    nodeId: config.NODE_ID,
    engine: engine.kind,
    models: engine.models().map((m) => m.id),
    metricsPort,
  });

  const lifecycle = app.get(NodeLifecycle);
  const heartbeat = app.get<RepeatingTask>(HEARTBEAT_TASK);
  // stop and kill are two ways to end; whichever comes first is the only one that runs.
  let stopping: Promise<void> | undefined;
  const end = (how: () => Promise<void>) => (stopping ??= how());
  const close = async (how: 'graceful' | 'crash') => {
    await scheduler.stop();
    planCache?.stop();
    await ops.close();
    await app.close();
    peers.close();
    unwatchDevice();
    unwatchTails();
    events.close();
    if (how === 'graceful') events.flush();
    await vllm?.close();
    await (how === 'graceful' ? kvStore?.close() : kvStore?.abort());
    await engine.close();
  };
  return {
    nodeId: config.NODE_ID,
    grpcAddress: app.get(ChunkTransferGrpcServer).address,
    metricsPort,
    ...(vllm ? { vllmEvents: { endpoint: vllm.endpoint, ...(vllm.replayEndpoint ? { replayEndpoint: vllm.replayEndpoint } : {}) } } : {}),
    stop: () =>
      end(async () => {
        lifecycle.accepting = false;
        heartbeat.stop();
        app.get(PublishHeartbeatUseCase).execute(); // goodbye: schedulers stop routing here now
        await endpoints.close(nodeInferSubject(config.NODE_ID));
        await scheduler.drain(config.NODE_DRAIN_TIMEOUT_MS!);
        await close('graceful');
        logger.emit('info', 'node-manager stopped', { nodeId: config.NODE_ID });
      }),
    kill: () =>
      end(async () => {
        lifecycle.accepting = false;
        heartbeat.stop();
        await nats.close();
        await close('crash');
        logger.emit('warn', 'node-manager killed', { nodeId: config.NODE_ID });
      }),
  };
}
