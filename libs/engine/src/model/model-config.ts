/**
 * Architecture of one Llama-family model (Llama, Qwen2, Qwen3 variants): RMSNorm,
 * RoPE (NeoX rotate_half), grouped-query attention, SwiGLU MLP.
 */
export interface ModelConfig {
  readonly id: string;
  readonly layers: number;
  readonly dModel: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** Hidden size of the SwiGLU MLP (intermediate_size). */
  readonly ffn: number;
  readonly vocab: number;
  readonly ropeTheta: number;
  readonly rmsEps: number;
  readonly maxContext: number;
  /** lm_head shares the embedding table. */
  readonly tieEmbeddings: boolean;
  /** q/k/v projections carry a bias (Qwen2). */
  readonly qkvBias: boolean;
  /** Per-head RMSNorm on q and k before RoPE (Qwen3). */
  readonly qkNorm: boolean;
  readonly bosTokenId: number;
  readonly eosTokenId: number;
}

export class ModelConfigError extends Error {
  constructor(
    readonly modelId: string,
    problems: readonly string[],
  ) {
    super(`invalid model config ${modelId}: ${problems.join('; ')}`);
    this.name = 'ModelConfigError';
  }
}

/** Throws with every problem listed, so a bad config.json is fixed in one go. */
export function validateModelConfig(c: ModelConfig): ModelConfig {
  const problems: string[] = [];
  const positive = ['layers', 'dModel', 'heads', 'kvHeads', 'headDim', 'ffn', 'vocab', 'maxContext'] as const;
  for (const k of positive) {
    if (!Number.isInteger(c[k]) || c[k] <= 0) problems.push(`${k} must be a positive integer (got ${c[k]})`);
  }
  if (c.heads % c.kvHeads !== 0) problems.push(`heads (${c.heads}) must be a multiple of kvHeads (${c.kvHeads})`);
  if (c.headDim % 2 !== 0) problems.push(`headDim (${c.headDim}) must be even for RoPE`);
  if (!(c.ropeTheta > 0)) problems.push(`ropeTheta must be > 0`);
  if (!(c.rmsEps > 0)) problems.push(`rmsEps must be > 0`);
  for (const k of ['bosTokenId', 'eosTokenId'] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 0 || c[k] >= c.vocab) problems.push(`${k} out of vocab range`);
  }
  if (problems.length > 0) throw new ModelConfigError(c.id, problems);
  return c;
}

/** Number of weights (embedding counted once when tied). */
export function parameterCount(c: ModelConfig): number {
  const q = c.heads * c.headDim;
  const kv = c.kvHeads * c.headDim;
  let perLayer = c.dModel * q + 2 * c.dModel * kv + q * c.dModel + 3 * c.dModel * c.ffn + 2 * c.dModel;
  if (c.qkvBias) perLayer += q + 2 * kv;
  if (c.qkNorm) perLayer += 2 * c.headDim;
  const embed = c.vocab * c.dModel;
  return c.layers * perLayer + embed + (c.tieEmbeddings ? 0 : embed) + c.dModel;
}

/** Elements of one token's K (or V) row in one layer. */
export function kvDim(c: ModelConfig): number {
  return c.kvHeads * c.headDim;
}
