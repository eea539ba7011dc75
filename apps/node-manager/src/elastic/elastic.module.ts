import { Module } from '@nestjs/common';
import { BLOCK_TOKENS, type ElasticMember } from '@mnemo/kv-core';
import type { Engine } from '@mnemo/engine';
import { CLOCK, RepeatingTask, ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { BatchingModule } from '../batching/batching.module.js';
import { SequenceStore } from '../batching/sequence.store.js';
import { NODE_CONFIG, type NodeManagerConfig } from '../config/node-manager.config.js';
import { ENGINE } from '../engine/engine.factory.js';
import { CoordinatedElasticCache } from './coordinated-elastic.cache.js';
import { ElasticCacheMetrics } from './elastic-cache.metrics.js';
import { ELASTIC_CACHE, NO_ELASTIC_CACHE, type ElasticCachePort } from './elastic-cache.port.js';

/** Injection token of the periodic rebalance (Algorithm 1's scale-down check). */
export const ELASTIC_TASK = Symbol('ELASTIC_TASK');

function elasticMembers(engine: Engine): ElasticMember[] {
  const e = engine as Engine & { elasticMembers?: () => ElasticMember[] };
  return typeof e.elasticMembers === 'function' ? e.elasticMembers() : [];
}

/**
 * The node's models on one device budget lend each other idle KV memory when NODE_KV_DEVICE_BYTES
 * is set, NODE_KV_ELASTIC is on and more than one model is served; otherwise every model keeps
 * its start-up region and the port does nothing.
 */
const elasticCache = {
  provide: ELASTIC_CACHE,
  inject: [ENGINE, NODE_CONFIG, SequenceStore, CLOCK, ServiceMetrics],
  useFactory: (
    engine: Engine,
    config: NodeManagerConfig,
    store: SequenceStore,
    clock: Clock,
    metrics: ServiceMetrics,
  ): ElasticCachePort => {
    const members = elasticMembers(engine);
    if (config.kvDeviceBytes === undefined || config.NODE_KV_ELASTIC !== 'on' || members.length < 2) return NO_ELASTIC_CACHE;
    // A finished turn's KV stays only in the prefix cache: without it nothing is held, and it holds at most its bound.
    const capTokens =
      config.NODE_PREFIX_CACHE === 'off'
        ? 0
        : config.NODE_PREFIX_CACHE_BLOCKS === undefined
          ? undefined
          : config.NODE_PREFIX_CACHE_BLOCKS * BLOCK_TOKENS;
    const cache = new CoordinatedElasticCache(members, config.NODE_KV_ELASTIC_WINDOW_MS!, store, clock, {
      windowMs: config.NODE_KV_ELASTIC_SESSION_WINDOW_MS!,
      capTokens,
    });
    new ElasticCacheMetrics(metrics, cache);
    return cache;
  },
};

const rebalanceTask = {
  provide: ELASTIC_TASK,
  inject: [ELASTIC_CACHE, NODE_CONFIG],
  useFactory: (cache: ElasticCachePort, config: NodeManagerConfig) =>
    new RepeatingTask(() => (cache instanceof CoordinatedElasticCache ? cache.rebalance() : undefined), config.NODE_KV_ELASTIC_TICK_MS!),
};

@Module({
  imports: [BatchingModule],
  providers: [elasticCache, rebalanceTask],
  exports: [ELASTIC_CACHE],
})
export class ElasticModule {}
