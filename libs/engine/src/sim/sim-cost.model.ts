/**
 * Latency model of the sim engine. It stands in for a GPU so cluster-scale runs (routing,
 * batching, preemption) behave like a real server: prefill grows with prompt tokens, a decode
 * step has a fixed launch cost plus a per-sequence and a per-context-token (attention) part, so
 * batching many sequences is much cheaper than running them one by one — which is the point of
 * continuous batching. Defaults are small so tests stay fast; benchmarks pass realistic ones.
 */
export interface SimCostModel {
  /** Fixed cost of one prefill call (kernel launches), ms. */
  readonly prefillBaseMs: number;
  /** Per prompt token of the whole prefill batch, ms. */
  readonly prefillPerTokenMs: number;
  /**
   * Attention of a prefill, per computed token per 1000 tokens of context it attends to (the
   * positions before it), ms: what makes a long prompt's prefill grow faster than its length.
   * 0 or absent (the default): prefill is linear in the tokens computed.
   */
  readonly prefillPerKContextMs?: number;
  /** Fixed cost of one decode step, ms. */
  readonly decodeBaseMs: number;
  /** Per sequence in the decode batch, ms. */
  readonly decodePerSeqMs: number;
  /** Per 1000 context tokens summed over the decode batch (attention reads the whole KV), ms. */
  readonly decodePerKContextMs: number;
  /**
   * Host → device copy of one restored 256-token chunk over the modelled PCIe link, ms: a
   * restore's layers arrive no sooner than the link carries them (0: only the real copy's time).
   * Restored KV crosses it whatever tier or peer it came from.
   */
  readonly restorePerChunkMs: number;
}

export const DEFAULT_SIM_COST: SimCostModel = {
  prefillBaseMs: 1,
  prefillPerTokenMs: 0.01,
  decodeBaseMs: 2,
  decodePerSeqMs: 0.25,
  decodePerKContextMs: 0.05,
  restorePerChunkMs: 0,
};

/** Context the computed tokens [from, to) of one sequence attend to in all: each attends to the positions before it. */
export function attendedTokens(from: number, to: number): number {
  return to > from ? ((from + to - 1) * (to - from)) / 2 : 0;
}

/**
 * Time of one prefill call computing `tokens` prompt tokens in all, which attend to
 * `attended` context tokens in all (see {@link attendedTokens}). Scalar, so a caller pricing
 * many batches (the twin) allocates nothing.
 */
export function prefillStepMs(cost: SimCostModel, tokens: number, attended = 0): number {
  return cost.prefillBaseMs + cost.prefillPerTokenMs * tokens + ((cost.prefillPerKContextMs ?? 0) * attended) / 1000;
}

/**
 * Attention per 256-token chunk pair ÷ prefill per 256-token chunk as this cost model prices them
 * (0: prefill linear in its tokens, or free): what a node's measured costs pull their attention
 * figure towards (kv-core PassCostOptions.attentionShare).
 */
export function simAttentionShare(cost: Pick<SimCostModel, 'prefillPerTokenMs' | 'prefillPerKContextMs'>): number {
  const perChunk = cost.prefillPerTokenMs * 256;
  return perChunk > 0 ? ((cost.prefillPerKContextMs ?? 0) * 256 * 256) / 1000 / perChunk : 0;
}

/** Time of one decode step of `seqs` sequences whose contexts sum to `contextTokens` (0 for none). */
export function decodeStepMs(cost: SimCostModel, seqs: number, contextTokens: number): number {
  if (seqs === 0) return 0;
  return cost.decodeBaseMs + cost.decodePerSeqMs * seqs + (cost.decodePerKContextMs * contextTokens) / 1000;
}

/** Time of one prefill call over prompts of the given lengths (computed tokens), attending to `attended` context tokens in all. */
export function prefillCostMs(cost: SimCostModel, promptLengths: readonly number[], attended = 0): number {
  if (promptLengths.length === 0) return 0;
  return prefillStepMs(
    cost,
    promptLengths.reduce((a, b) => a + b, 0),
    attended,
  );
}

/** Time of one decode step over sequences whose contexts have the given lengths. */
export function decodeCostMs(cost: SimCostModel, contextLengths: readonly number[]): number {
  return decodeStepMs(
    cost,
    contextLengths.length,
    contextLengths.reduce((a, b) => a + b, 0),
  );
}

/** Throws with every problem listed when a cost is negative or not finite. */
export function validateSimCost(cost: SimCostModel): SimCostModel {
  const bad = Object.entries(cost).filter(([, v]) => typeof v !== 'number' || !Number.isFinite(v) || v < 0);
  if (bad.length > 0)
    throw new RangeError(`invalid sim cost model: ${bad.map(([k, v]) => `${k}=${String(v)}`).join(', ')} (want finite ≥ 0)`);
  return cost;
}
