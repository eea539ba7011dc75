import { cachedBlocksBetweenTurns, CHUNK_TOKENS, DEFAULT_ROUTING_COSTS, type ServingSystem } from '@mnemo/kv-core';
import type { SimCostModel } from '@mnemo/engine';
import { simCostCompute } from '../costs/compute.port.js';
import type { ServiceOverheads } from '../costs/overhead.port.js';
import type { TransferLink } from '../costs/transfer.port.js';
import type { TwinNodeConfig } from '../node/twin.node.js';
import { DEFAULT_TWIN_SCHEDULER } from '../scheduler/twin.scheduler.js';
import type { TwinClusterConfig } from './twin.cluster.js';

/** The multi-round benchmark's cluster (bench/multiround/cluster.mjs CLUSTER, GPU, KV_LAYOUT), as data. */
export interface MultiroundSetup {
  readonly nodes: number;
  readonly model: string;
  readonly kvBlocks: number;
  readonly maxBatch: number;
  readonly maxContext: number;
  readonly hostPoolBytes: number;
  readonly ssdPoolBytes: number;
  readonly heartbeatMs: number;
  /** NODE_KV_BANDWIDTHS: placement weights of the host and SSD pools. */
  readonly bandwidths: { readonly host: number; readonly ssd: number };
  readonly kvLayers: number;
  readonly kvBytesPerToken: number;
  /** The nodes' sim cost model as they ran it (dilated), the PCIe link price included. */
  readonly compute: SimCostModel;
  /** What the scheduler was told (SCHEDULER_*), ms. */
  readonly routing: {
    readonly queueMsPerRequest: number;
    readonly moveMarginMs: number;
    readonly hostMsPerChunk: number;
    readonly ssdMsPerChunk: number;
    readonly peerMsPerChunk: number;
    /** `conductor`: fetch a longer prefix past this multiple of the node's own (SCHEDULER_CONDUCTOR_THRESHOLD_PCT ÷ 100). */
    readonly conductorThreshold?: number;
  };
  readonly users: number;
  readonly rampMs: number;
}

/** What the calibration measured on this machine. */
export interface MeasuredCosts {
  readonly links: {
    readonly hostLoad: TransferLink;
    readonly peer: TransferLink;
    readonly ssdRead: TransferLink;
    readonly hostWrite: TransferLink;
    readonly ssdWrite: TransferLink;
  };
  readonly overheads: ServiceOverheads;
}

/** A symphony variant of the benchmark: advisories missed and spurious. */
export interface AdvisoryVariant {
  readonly missed?: number;
  readonly spurious?: number;
}

/**
 * One configuration of the multi-round benchmark as a twin cluster: the same nodes, tiers,
 * batch, cost model and scheduler settings the live run gives each system (kv-core
 * SERVING_SYSTEMS: routing, what a node does with a turn's KV between turns, tiers, peer fetch,
 * advisories), the same users and ramp, and the costs this machine's calibration measured.
 */
export function multiroundCluster(
  setup: MultiroundSetup,
  system: ServingSystem,
  measured: MeasuredCosts,
  o: { seed: number; tenant: string; variant?: AdvisoryVariant; untilMs?: number },
): TwinClusterConfig {
  const ssd = system.tiers.includes('ssd');
  const node = (i: number): TwinNodeConfig => ({
    id: `${o.tenant}-${i}`,
    model: setup.model,
    eosTokenId: 0,
    maxContext: setup.maxContext,
    kvBlocks: setup.kvBlocks,
    maxBatch: setup.maxBatch,
    maxPrefillTokens: 8192,
    // A live node's default (NODE_HOLD_LONG_PROMPTS=on).
    holdLongPrompts: true,
    maxWaiting: 256,
    prefixCache: true,
    prefixCacheBlocks: cachedBlocksBetweenTurns(system),
    heartbeatMs: setup.heartbeatMs,
    finishBeatMs: 50,
    kvEventsMs: 100,
    layers: setup.kvLayers,
    kvBytesPerToken: setup.kvBytesPerToken,
    host: system.tiers.includes('host') ? [{ bytes: setup.hostPoolBytes, bandwidth: setup.bandwidths.host }] : [],
    ssd: ssd ? [{ bytes: setup.ssdPoolBytes, bandwidth: setup.bandwidths.ssd }] : [],
    ssdTtlMs: 24 * 3600 * 1000,
    promote: true,
    prefetchTtlMs: 60_000,
    maxAdvisories: 1024,
    warm: true,
  });
  const r = setup.routing;
  return {
    nodes: Array.from({ length: setup.nodes }, (_, i) => node(i)),
    scheduler: {
      ...DEFAULT_TWIN_SCHEDULER,
      policy: system.routing,
      costs: {
        ...DEFAULT_ROUTING_COSTS,
        queueMsPerRequest: r.queueMsPerRequest,
        moveMarginMs: r.moveMarginMs,
        recomputeMsPerChunk: setup.compute.prefillPerTokenMs * CHUNK_TOKENS,
        loadMsPerChunk: { device: 0, host: r.hostMsPerChunk, ssd: r.ssdMsPerChunk },
        peerMsPerChunk: system.peerFetch ? r.peerMsPerChunk : Infinity,
        ...(r.conductorThreshold !== undefined ? { conductorThreshold: r.conductorThreshold } : {}),
      },
    },
    costs: { compute: simCostCompute(setup.compute), links: measured.links, overheads: measured.overheads },
    users: {
      users: setup.users,
      rampMs: setup.rampMs,
      maxContext: setup.maxContext,
      advisories: system.advisories,
      missed: o.variant?.missed ?? 0,
      spurious: o.variant?.spurious ?? 0,
    },
    tenant: o.tenant,
    model: setup.model,
    seed: o.seed,
    ...(o.untilMs !== undefined ? { untilMs: o.untilMs } : {}),
  };
}
