import { planReuse } from '@mnemo/kv-core';
import type { CrossModelPlan, PrefillInput } from '../engine.interface.js';
import type { ModelConfig } from '../model/model-config.js';
import type { ModelRuntime } from './model.runtime.js';
import { runPartialPrefill } from './partial-prefill.runner.js';

/**
 * What DroidSpeak's cross-model prefix needs of the engine: its models, and the token history of
 * the sequence the prefix fills. Kept this small so plan checking and the partial prefill are
 * plain functions beside the engine's own prefill.
 */
export interface CrossModelModels {
  /** A served model's runtime; throws ModelNotFound for one not loaded. */
  runtime(model: string): ModelRuntime<unknown>;
  /** A model's config when it is served; undefined otherwise (a plan on it is declined, not an error). */
  servedConfig(model: string): ModelConfig | undefined;
  /** The device-cached prefix of the prompt under its salt: what the plan is offered from. */
  cachedTokens(input: PrefillInput): number;
  /** The token ids whose KV the sequence holds, in order; throws NotFound for a sequence gone. */
  kvTokens(seqId: string): number[];
}

/**
 * The input's cross-model plan when it is one this engine can run: a served base with the
 * same KV geometry, a valid pattern, a prefix short of the prompt, an E cache when the
 * pattern restarts at a transition layer. Anything else is declined (ordinary prefill).
 */
export function crossModelPlan(models: CrossModelModels, input: PrefillInput): CrossModelPlan | undefined {
  if (!input.crossModel) return undefined;
  const plan = input.crossModel(models.cachedTokens(input));
  if (!plan) return undefined;
  const own = models.runtime(input.model).config;
  const base = models.servedConfig(plan.baseModel);
  let fits =
    base !== undefined &&
    base.layers === own.layers &&
    base.kvHeads === own.kvHeads &&
    base.headDim === own.headDim &&
    base.dModel === own.dModel;
  fits &&= Number.isInteger(plan.until) && plan.until > 0 && plan.until < input.tokens.length;
  try {
    fits &&= planReuse(plan.pattern, own.layers).eLayer === null || plan.loadE !== undefined;
  } catch {
    fits = false;
  }
  if (!fits) plan.done?.(false);
  return fits ? plan : undefined;
}

/** Partial prefill of the prompt's first `until` positions over the base's KV (DroidSpeak §4.5). */
export async function prefillCrossPrefix(models: CrossModelModels, input: PrefillInput, plan: CrossModelPlan): Promise<void> {
  const prefix = input.tokens.slice(0, plan.until);
  const loadE = plan.loadE?.bind(plan);
  await runPartialPrefill(models.runtime(input.model), {
    seqId: input.seqId,
    tokens: prefix,
    pattern: plan.pattern,
    fetchKv: (l) => plan.load(l),
    ...(loadE ? { fetchE: (l: number) => loadE(l) } : {}),
  });
  models.kvTokens(input.seqId).push(...prefix);
}
