import { findSyntheticModel, ReferenceEngine, SimEngine, simAttentionShare, type Engine } from '@mnemo/engine';
import { ConfigError } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { stepTraceWriter } from './step.trace.js';

/** Injection token of the node's engine. */
export const ENGINE = Symbol('ENGINE');

/** The synthetic catalog's base of a derived model (the config's CatalogBase). */
export const syntheticBase = (model: string): string | undefined => findSyntheticModel(model)?.derivedFrom?.base;

/**
 * The engine's attention per chunk pair ÷ compute per chunk, where the node knows it (the sim
 * engine's cost model); the node's measured costs pull their attention term towards it (kv-core
 * PassCostOptions.attentionShare). The reference engine states none: its passes measure it. Nor does
 * a cost model without an attention term: a share of 0 would report the fit's attention figure
 * from the first passes, before long ones back it, and a live run with it (2026-11-30) put both
 * routers that read the nodes' figures far behind the ones that do not.
 */
export function engineAttentionShare(config: NodeManagerConfig): number | undefined {
  if (config.NODE_ENGINE !== 'sim') return undefined;
  const share = simAttentionShare({
    prefillPerTokenMs: config.NODE_SIM_PREFILL_TOKEN_US! / 1000,
    prefillPerKContextMs: (config.NODE_SIM_PREFILL_KCONTEXT_US ?? 0) / 1000,
  });
  return share > 0 ? share : undefined;
}

/** Builds the engine NODE_ENGINE names; a model it cannot serve is a configuration error. */
export async function createEngine(config: NodeManagerConfig): Promise<Engine> {
  const models = config.NODE_MODELS!;
  // One budget shared by the models (elastic regions) when NODE_KV_DEVICE_BYTES is set.
  const kvBlocks = config.kvDeviceBytes !== undefined ? { deviceBytes: config.kvDeviceBytes } : config.NODE_KV_BLOCKS!;
  try {
    switch (config.NODE_ENGINE) {
      case 'reference':
        return await ReferenceEngine.create({
          models,
          backend: config.NODE_REFERENCE_BACKEND as 'cpu' | 'cuda',
          kvBlocks,
          ...(config.NODE_KV_LAYER_STREAM === 'on'
            ? { layerStream: { window: config.NODE_KV_STREAM_WINDOW!, hostBytes: config.NODE_KV_STREAM_HOST_MB! * 2 ** 20 } }
            : {}),
          ...(config.NODE_PREFIX_CACHE_BLOCKS !== undefined ? { prefixCacheBlocks: config.NODE_PREFIX_CACHE_BLOCKS } : {}),
          ...(config.NODE_STEP_TRACE ? { onStep: stepTraceWriter(config.NODE_STEP_TRACE) } : {}),
          ...(config.NODE_PREEMPTION === 'swap'
            ? {
                blockGroups: config.NODE_BLOCK_GROUP_BLOCKS!,
                swap: { granularity: 'grouped' as const, hostBytes: config.NODE_SWAP_SPACE_MB! * 2 ** 20 },
              }
            : {}),
        });
      case 'sim':
      default:
        return new SimEngine({
          models,
          cost: {
            decodeBaseMs: config.NODE_SIM_DECODE_STEP_MS!,
            decodePerSeqMs: config.NODE_SIM_DECODE_SEQ_US! / 1000,
            decodePerKContextMs: config.NODE_SIM_DECODE_KCONTEXT_US! / 1000,
            prefillPerTokenMs: config.NODE_SIM_PREFILL_TOKEN_US! / 1000,
            prefillPerKContextMs: (config.NODE_SIM_PREFILL_KCONTEXT_US ?? 0) / 1000,
            restorePerChunkMs: config.NODE_SIM_RESTORE_US_PER_CHUNK! / 1000,
          },
          eosProbability: config.NODE_SIM_EOS_PER_MILLE! / 1000,
          kvBlocks,
          ...(config.NODE_SIM_MAX_CONTEXT !== undefined ? { maxContext: config.NODE_SIM_MAX_CONTEXT } : {}),
          ...(config.NODE_PREFIX_CACHE_BLOCKS !== undefined ? { prefixCacheBlocks: config.NODE_PREFIX_CACHE_BLOCKS } : {}),
          ...(config.simKvBytes ? { kvBytes: config.simKvBytes } : {}),
        });
    }
  } catch (e) {
    if (e instanceof RangeError || (e as { code?: unknown })?.code !== undefined) {
      const budget = config.kvDeviceBytes !== undefined ? `, NODE_KV_DEVICE_BYTES=${config.kvDeviceBytes}` : '';
      const stream =
        config.NODE_ENGINE === 'reference' && config.NODE_KV_LAYER_STREAM === 'on'
          ? `, NODE_KV_STREAM_WINDOW=${config.NODE_KV_STREAM_WINDOW}`
          : '';
      throw new ConfigError([
        `NODE_ENGINE=${config.NODE_ENGINE}, NODE_MODELS=${models.join(',')}${budget}${stream}: ${(e as Error).message}`,
      ]);
    }
    throw e;
  }
}
