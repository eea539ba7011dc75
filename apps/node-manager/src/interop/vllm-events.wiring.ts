import type { Engine } from '@mnemo/engine';
import { metricBuilders, VllmEventsPublisher, type JsonLogger, type ServiceMetrics, type VllmEventBatch } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { VllmEventsBridge } from './vllm-events.bridge.js';

export interface VllmEventsHandle {
  readonly bridge: VllmEventsBridge;
  /** Bound PUB and replay endpoints. */
  readonly endpoint: string;
  readonly replayEndpoint?: string;
  close(): Promise<void>;
}

/** Starts the vLLM-format KV event publisher when NODE_VLLM_EVENTS names an endpoint; null when off. */
export async function startVllmEvents(
  config: NodeManagerConfig,
  engine: Engine,
  metrics: ServiceMetrics,
  logger: JsonLogger,
): Promise<VllmEventsHandle | null> {
  const endpoint = config.NODE_VLLM_EVENTS?.trim();
  if (!endpoint || endpoint === 'off') return null;
  const replay = config.NODE_VLLM_EVENTS_REPLAY?.trim();
  const pub = await VllmEventsPublisher.bind({
    endpoint,
    ...(replay && replay !== 'off' ? { replayEndpoint: replay } : {}),
    topic: config.NODE_VLLM_EVENTS_TOPIC ?? '',
    onError: (e) => logger.emit('warn', 'vLLM KV event publish failed', { err: String(e) }),
  });
  // token_ids are tenants' prompts in clear; without them a subscriber sees only block hashes, which
  // are salted per tenant. The field stays (as []) because vLLM's BlockStored declares it required.
  const sink = config.NODE_VLLM_EVENTS_TOKEN_IDS === 'off' ? { publish: (b: VllmEventBatch) => pub.publish(withoutTokenIds(b)) } : pub;
  const bridge = new VllmEventsBridge(
    sink,
    new Set(engine.models().map((m) => m.id)),
    config.NODE_VLLM_EVENTS_MAX_CHUNKS!,
    config.kvStore.eventsMs,
  );
  const unwatch = engine.watchChunks((e) => bridge.onChunk(e));
  const { tally } = metricBuilders(metrics.registry);
  tally(
    'mnemo_node_vllm_events_total',
    'Block events published in vLLM format (BlockStored / BlockRemoved, one per chunk and tier)',
    () => bridge.counters.events,
  );
  tally(
    'mnemo_node_vllm_events_unmapped_total',
    'KV changes left out of the vLLM-format stream: chunks whose tokens this node never saw on its device',
    () => bridge.counters.unmapped,
  );
  logger.emit('info', 'vLLM-format KV events on', {
    endpoint: pub.endpoint,
    replayEndpoint: pub.replayEndpoint,
    tokenIds: config.NODE_VLLM_EVENTS_TOKEN_IDS,
  });
  return {
    bridge,
    endpoint: pub.endpoint,
    ...(pub.replayEndpoint ? { replayEndpoint: pub.replayEndpoint } : {}),
    close: async () => {
      unwatch();
      bridge.flush();
      bridge.close();
      await pub.close();
    },
  };
}

/** The batch with every BlockStored's token_ids emptied (replays serve it the same way). */
export function withoutTokenIds(b: VllmEventBatch): VllmEventBatch {
  return { ...b, events: b.events.map((e) => (e.type === 'BlockStored' ? { ...e, tokenIds: [] } : e)) };
}
