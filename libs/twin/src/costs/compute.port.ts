import { decodeStepMs, prefillStepMs, simAttentionShare, type SimCostModel } from '@mnemo/engine';

/**
 * Time of one engine call on the modelled device. The twin asks it per iteration with batch
 * shapes, never lists, so pricing a step allocates nothing. Part 2's GPU rooflines plug in here.
 */
export interface ComputeModel {
  /** One prefill call over `seqs` sequences that compute `tokens` prompt tokens in all, ms (0 for none). */
  prefillMs(seqs: number, tokens: number, attendedTokens: number): number;
  /** One decode step of `seqs` sequences whose contexts sum to `contextTokens`, ms (0 for none). */
  decodeMs(seqs: number, contextTokens: number): number;
  /** The host → device copy of one restored 256-token chunk over the modelled link, ms (0: none priced). */
  readonly restorePerChunkMs: number;
  /**
   * A chunk attending over one chunk of context ÷ computing a chunk, as this port prices them: what
   * the node's measured costs pull their attention figure towards (PassCostOptions.attentionShare);
   * absent: no prior, towards 0.
   */
  readonly attentionShare?: number;
}

/**
 * The sim engine's cost model (libs/engine SimCostModel) as the twin's compute port: the same
 * functions price the same batch, so a twin node and a live sim node spend the same modelled
 * time. `attendedTokens` is priced by the model's attention term (0 in the live defaults).
 */
export function simCostCompute(cost: SimCostModel): ComputeModel {
  const share = simAttentionShare(cost);
  return {
    prefillMs: (seqs, tokens, attended) => (seqs === 0 ? 0 : prefillStepMs(cost, tokens, attended)),
    decodeMs: (seqs, context) => decodeStepMs(cost, seqs, context),
    restorePerChunkMs: cost.restorePerChunkMs,
    // None where the cost model has no attention term, as a live sim node states none (engineAttentionShare).
    ...(share > 0 ? { attentionShare: share } : {}),
  };
}
