import { kvBytesPerToken, type ModelSpec } from './hardware.tables.js';

/**
 * What one GPU's memory leaves for KV once the weights and a prefill's activations are charged,
 * as vLLM sizes its cache: `utilization` of the memory (vLLM's `gpu_memory_utilization`, default
 * 0.9), less the weights, less the activation peak its profiling pass measures for a forward pass
 * of `max_num_batched_tokens` tokens — the chunk under chunked prefill, the whole prompt without.
 */
export interface MemoryBudgetOptions {
  readonly utilization?: number;
}

export const VLLM_GPU_MEMORY_UTILIZATION = 0.9;

/**
 * Activation bytes per prefilled token: the tensors live at once inside one decoder layer's forward
 * (the residual and its normed copy, Q·K·V, the attention output, the MLP's gate|up and its
 * activated half), in the model's dtype. Attention keeps no per-pair tensor (FlashAttention);
 * logits are taken for the last token of each sequence only, so they do not grow with the chunk.
 */
export function activationBytesPerToken(m: ModelSpec): number {
  if (m.intermediate === undefined) throw new RangeError(`${m.name}: no MLP intermediate width in the tables`);
  const qkv = m.hidden + 2 * m.kvHeads * m.headDim;
  return m.dtypeBytes * (2 * m.hidden + qkv + m.hidden + 3 * m.intermediate);
}

/** Bytes left for KV with a forward pass of `prefillTokens` tokens; 0 when the weights and activations take it all. */
export function kvBudgetBytes(memBytes: number, m: ModelSpec, prefillTokens: number, o: MemoryBudgetOptions = {}): number {
  const free =
    memBytes * (o.utilization ?? VLLM_GPU_MEMORY_UTILIZATION) - m.params * m.dtypeBytes - prefillTokens * activationBytesPerToken(m);
  return Math.max(0, Math.floor(free));
}

/**
 * The longest context (tokens, whole blocks of `blockTokens`) one model serves alone on one GPU:
 * with chunked prefill of `chunkTokens` the activation is the chunk's; without (`null`) it is the
 * whole prompt's, so N·(KV + activation per token) must fit. vLLM reserves the chunk's activation
 * whatever the context, so a budget the chunk's activation exhausts serves nothing (0).
 */
export function maxContextAlone(
  memBytes: number,
  m: ModelSpec,
  chunkTokens: number | null,
  blockTokens = 16,
  o: MemoryBudgetOptions = {},
): number {
  const kv = kvBytesPerToken(m);
  const tokens =
    chunkTokens === null
      ? Math.floor(kvBudgetBytes(memBytes, m, 0, o) / (kv + activationBytesPerToken(m)))
      : Math.floor(kvBudgetBytes(memBytes, m, chunkTokens, o) / kv);
  return Math.floor(tokens / blockTokens) * blockTokens;
}
