import { createKernelBackend, type KernelBackend } from '@mnemo/native-cuda';
import { budgetReserve, isDeviceKvBudget, splitDeviceBudget, type DeviceKvBudget } from '../model/device-budget.js';
import type { ModelWeights } from '../weights/model-weights.js';
import type { ForwardStep } from './forward.step.js';
import type { SwapOptions } from './kv.swapper.js';
import type { LayerStreamSettings } from './layer-stream/streamed-sequences.js';
import { resolveWeights } from './weights.resolver.js';

export interface ReferenceEngineOptions {
  /** Catalog ids (`mnemo-tiny`, …), Hugging Face model directories, or weights already in memory. */
  readonly models: ReadonlyArray<string | ModelWeights>;
  /** 'cpu' | 'cuda' via `createKernelBackend`, or a backend instance. */
  readonly backend: 'cpu' | 'cuda' | KernelBackend<unknown>;
  /** Device KV blocks (16 tokens each) per model: one number for all, per model id, or split from one device budget. */
  readonly kvBlocks: number | Readonly<Record<string, number>> | DeviceKvBudget;
  /** Block group size (FastSwitch §3.1) of every model's device cache; 0 or absent: no groups. */
  readonly blockGroups?: number;
  /** Swap preemption; only on a backend whose KV lives in host memory (CPU), ignored otherwise. */
  readonly swap?: SwapOptions;
  /** Most cached (reusable, unreferenced) blocks each model's device cache keeps; default unbounded. */
  readonly prefixCacheBlocks?: number;
  /** Serve contexts longer than a model's device cache through the layer stream cache; absent: refused. */
  readonly layerStream?: LayerStreamSettings;
  /** Told each forward step's batch shape and compute time (the twin calibrates its compute port from them). */
  readonly onStep?: (step: ForwardStep) => void;
}

/** What `ReferenceEngine.create` builds from its options: the backend, the weights and each model's device blocks. */
export interface ResolvedEngineOptions {
  readonly backend: KernelBackend<unknown>;
  readonly weights: readonly ModelWeights[];
  readonly kvBlocks: number | Readonly<Record<string, number>>;
  /** Per model, blocks its tensor reserves beyond its start; only on one device budget. */
  readonly reserve?: Readonly<Record<string, number>>;
}

export function resolveEngineOptions(opts: ReferenceEngineOptions): ResolvedEngineOptions {
  const backend = typeof opts.backend === 'string' ? (createKernelBackend(opts.backend) as KernelBackend<unknown>) : opts.backend;
  const weights = opts.models.map(resolveWeights);
  // The CPU backend stores KV as fp32; CUDA as fp16/bf16.
  const bytesPerElement = backend.name === 'cuda' ? 2 : 4;
  if (!isDeviceKvBudget(opts.kvBlocks)) return { backend, weights, kvBlocks: opts.kvBlocks };
  const configs = weights.map((w) => w.config);
  const regions = splitDeviceBudget(configs, opts.kvBlocks, bytesPerElement);
  // NOTE: a CUDA tensor is committed memory: reserving the whole budget per model would take
  // models × budget of the GPU. Without VMM page remapping (not built) a CUDA cache keeps its
  // region: it can lend units but not grow, so the coordinator never moves any.
  const reserve = backend.name === 'cuda' ? regions : budgetReserve(configs, opts.kvBlocks, bytesPerElement);
  return { backend, weights, kvBlocks: regions, reserve };
}

/** Whether the backend's tensors are plain host memory the native copy workers can reach. */
export function hostMemoryBackend(backend: KernelBackend<unknown>): boolean {
  const probe = backend.alloc(1);
  try {
    return probe instanceof Float32Array;
  } finally {
    backend.free(probe);
  }
}
