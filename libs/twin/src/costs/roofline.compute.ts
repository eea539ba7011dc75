import type { ComputeModel } from './compute.port.js';
import { efficiencyOf, kvBytesPerToken, type Efficiency, type GpuSpec, type ModelSpec } from './hardware.tables.js';

/** A GPU running one model, priced as a roofline: each call takes the longer of its FLOPs and its bytes, plus a fixed step. */
export interface RooflineCompute extends ComputeModel {
  readonly gpu: GpuSpec;
  readonly model: ModelSpec;
  readonly efficiency: Efficiency;
  /** Prefill of one token in a large batch (linear layers only), ms: what routing weighs a recomputed chunk by. */
  readonly prefillPerTokenMs: number;
}

/**
 * The roofline of a decoder-only transformer on one GPU:
 * - FLOPs: 2 · params (active ones for a mixture of experts) per computed token (the linear layers), plus attention's 4 · layers · hidden
 *   per attended (query, key) pair (QKᵀ and AV);
 * - bytes: the weights once per call, plus every context token's KV that decode reads;
 * - a call takes max(linear FLOPs / (peak · mfu) + attention FLOPs / (peak · attnEff), bytes / (bandwidth · memEff))
 *   + stepMs, at the GPU row's efficiency (GPU_EFFICIENCY) unless one is given (attnEff: mfu where unmeasured).
 * Host ↔ device copies are priced by the node's links (restorePerChunkMs 0: not counted twice).
 */
export function rooflineCompute(gpu: GpuSpec, model: ModelSpec, efficiency: Efficiency = efficiencyOf(gpu)): RooflineCompute {
  const flopsPerMs = (gpu.bf16Flops * efficiency.mfu) / 1000;
  const attnFlopsPerMs = (gpu.bf16Flops * (efficiency.attnEff ?? efficiency.mfu)) / 1000;
  const bytesPerMs = (gpu.memBytesPerS * efficiency.memEff) / 1000;
  const weightBytes = model.params * model.dtypeBytes;
  // A mixture of experts computes with its active parameters and still streams all of its weights.
  const linearFlops = 2 * (model.activeParams ?? model.params);
  const attnFlops = 4 * model.layers * model.hidden;
  const kvBytes = kvBytesPerToken(model);
  // Decode's FLOPs run at the tensor peak's utilisation too: at small batches the bytes dominate anyway.
  const call = (linear: number, attention: number, bytes: number) =>
    Math.max(linear / flopsPerMs + attention / attnFlopsPerMs, bytes / bytesPerMs) + efficiency.stepMs;
  return {
    gpu,
    model,
    efficiency,
    prefillPerTokenMs: linearFlops / flopsPerMs,
    prefillMs: (seqs, tokens, attended) =>
      seqs === 0 || tokens <= 0 ? 0 : call(linearFlops * tokens, attnFlops * attended, weightBytes + kvBytes * tokens),
    decodeMs: (seqs, context) => (seqs === 0 ? 0 : call(linearFlops * seqs, attnFlops * context, weightBytes + kvBytes * context)),
    restorePerChunkMs: 0,
    // A chunk over a chunk of context: 256² attended pairs at the attention rate, against 256 tokens' linear FLOPs.
    attentionShare: (attnFlops * 256 * 256) / attnFlopsPerMs / ((linearFlops * 256) / flopsPerMs),
  };
}

/** The same hardware with every figure scaled (the robustness table's ±20%). */
export function scaleGpu(gpu: GpuSpec, f: { flops?: number; mem?: number }): GpuSpec {
  return { ...gpu, bf16Flops: gpu.bf16Flops * (f.flops ?? 1), memBytesPerS: gpu.memBytesPerS * (f.mem ?? 1) };
}
