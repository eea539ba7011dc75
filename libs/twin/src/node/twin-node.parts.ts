import { CHUNK_TOKENS } from '@mnemo/kv-core';
import { NodeKv } from './node-kv.js';
import { TwinDevice } from './twin-device.js';
import { TwinTiers } from './twin-tiers.js';
import type { TwinNodeConfig, TwinNodeCosts, TwinNodeNet } from './twin-node.config.js';

/** What a twin node keeps its KV in: the device cache, the host and SSD tiers (when it has any) and the KV store over them. */
export interface TwinNodeParts {
  readonly device: TwinDevice;
  readonly tiers?: TwinTiers;
  readonly kv: NodeKv;
}

export function twinNodeParts(config: TwinNodeConfig, costs: TwinNodeCosts, net: TwinNodeNet): TwinNodeParts {
  const segBytes = (config.kvBytesPerToken / config.layers) * CHUNK_TOKENS;
  // The device and tiers report to the KV store made just after them (their listeners fire later).
  // eslint-disable-next-line prefer-const
  let kv: NodeKv;
  const device = new TwinDevice(config.model, config.kvBlocks, (e) => kv.onChunk(e), {
    prefixCache: config.prefixCache,
    prefixCacheBlocks: config.prefixCacheBlocks,
  });
  let tiers: TwinTiers | undefined;
  if (config.host.length + config.ssd.length > 0) {
    tiers = new TwinTiers(
      {
        layers: config.layers,
        segBytes,
        host: config.host,
        ssd: config.ssd,
        ssdTtlMs: config.ssdTtlMs,
        hostWrite: costs.links.hostWrite,
        ssdWrite: costs.links.ssdWrite,
      },
      net.events,
      (c) => kv.onTierChange(c),
    );
  }
  kv = new NodeKv(
    config.id,
    tiers,
    device,
    { events: net.events, peerTiers: (id) => net.peerTiers(id), publish: (c, t) => net.publishKv(config.id, c, t) },
    {
      layers: config.layers,
      kvEventsMs: config.kvEventsMs,
      promote: config.promote,
      prefetchTtlMs: config.prefetchTtlMs,
      maxAdvisories: config.maxAdvisories,
      warm: config.warm,
      links: costs.links,
      exportMsPerChunk: costs.overheads.exportMsPerChunk,
    },
  );
  device.restorableUntil = (seq, d) => kv.restorableUntil(seq, d, net.events.now);
  return { device, ...(tiers ? { tiers } : {}), kv };
}

/** A node's running totals, as the live node's metrics count them. */
export function twinNodeCounters() {
  return {
    iterations: 0,
    prefills: 0,
    decodes: 0,
    preemptions: 0,
    planMisses: 0,
    cachedTokens: 0,
    promptTokens: 0,
    blockedMs: 0,
    busyMs: 0,
    queuedMs: 0,
    queued: 0,
    firstTokenMs: 0,
    firstTokens: 0,
  };
}
