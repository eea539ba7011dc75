import { BLOCK_TOKENS, blockElements, ElasticCacheCoordinator, type ElasticModelSpec } from '@mnemo/kv-core';
import type { ModelConfig } from './model-config.js';

/** One device KV budget shared by the models of a node (SwiftCache §3.4), in bytes. */
export interface DeviceKvBudget {
  readonly deviceBytes: number;
}

export function isDeviceKvBudget(v: unknown): v is DeviceKvBudget {
  return typeof v === 'object' && v !== null && 'deviceBytes' in v;
}

export function elasticSpec(c: ModelConfig): ElasticModelSpec {
  return { id: c.id, shape: { layers: c.layers, kvHeads: c.kvHeads, headDim: c.headDim, blockTokens: BLOCK_TOKENS } };
}

/**
 * Blocks each model's block-major cache gets from the shared budget: equal regions of whole node
 * elastic units (the LCM of every model's block size), so any model can later lend to any other
 * without splitting a block. RangeError, naming the minimum, when the budget cannot give every
 * model one unit.
 */
export function splitDeviceBudget(
  configs: readonly ModelConfig[],
  budget: DeviceKvBudget,
  bytesPerElement: number,
): Record<string, number> {
  if (!Number.isSafeInteger(budget.deviceBytes) || budget.deviceBytes <= 0)
    throw new RangeError(`device KV budget must be a positive byte count, got ${budget.deviceBytes}`);
  const specs = configs.map(elasticSpec);
  const split = ElasticCacheCoordinator.splitBudget(specs, Math.floor(budget.deviceBytes / bytesPerElement));
  if (!split) {
    const min = ElasticCacheCoordinator.nodeUnitElements(specs) * bytesPerElement * specs.length;
    throw new RangeError(
      `device KV budget of ${budget.deviceBytes} bytes is below one elastic unit ` +
        `per model: at least ${min} bytes for ${configs.map((c) => c.id).join(', ')}`,
    );
  }
  return split;
}

/** Blocks each model could hold if it had the whole budget: what its elastic cache reserves. */
export function budgetReserve(configs: readonly ModelConfig[], budget: DeviceKvBudget, bytesPerElement: number): Record<string, number> {
  const elements = Math.floor(budget.deviceBytes / bytesPerElement);
  return Object.fromEntries(configs.map((c) => [c.id, Math.floor(elements / blockElements(elasticSpec(c).shape))]));
}
