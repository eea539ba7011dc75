import type { ReusePattern } from '@mnemo/kv-core';
import { loadTokenizer, PairEvaluator, ReferenceEngine, resolveWeights, type ModelWeights, type PatternMeasure } from '@mnemo/engine';

/** One opened (base, derived) pair, ready to measure patterns over a dataset. */
export interface PairSession {
  readonly layers: number;
  prepare(prompts: readonly (readonly number[])[]): Promise<void>;
  evaluate(pattern: ReusePattern): Promise<PatternMeasure>;
  close(): Promise<void>;
}

/**
 * The profiler's side effect on models: loading weights and running them. A port so the
 * job runner is plain orchestration; the one implementation runs the reference engine on
 * the CPU, where logits are exact and reproducible.
 */
export interface PairEvaluatorPort {
  open(base: string, derived: string, continuationTokens: number, maxPromptTokens: number): Promise<PairSession>;
  /** Token ids of a prompt for `model` (its tokenizer); throws when the model has none. */
  tokenize(model: string, text: string): number[];
}

export const PAIR_EVALUATOR = Symbol('PAIR_EVALUATOR');

const BLOCK_TOKENS = 16;

/**
 * Weights of the last pair opened: consecutive jobs of one pair (the usual case: re-profile
 * with another dataset, or a resumed job) skip loading or generating them again, while a
 * profiler never holds more than two models' weights.
 */
const recent = new Map<string, ModelWeights>();
function weights(id: string): ModelWeights {
  let w = recent.get(id);
  if (!w) {
    w = resolveWeights(id);
    recent.set(id, w);
    while (recent.size > 2) recent.delete(recent.keys().next().value!);
  }
  return w;
}

export const referencePairEvaluator: PairEvaluatorPort = {
  async open(base, derived, continuationTokens, maxPromptTokens) {
    // Two sequences live at once (the reference and one pattern), each up to prompt + continuation.
    const kvBlocks = 2 * Math.ceil((maxPromptTokens + continuationTokens) / BLOCK_TOKENS) + 2;
    const engine = await ReferenceEngine.create({ models: [weights(base), weights(derived)], backend: 'cpu', kvBlocks });
    try {
      const evaluator = new PairEvaluator(engine, base, derived, continuationTokens);
      return {
        layers: evaluator.layers,
        prepare: (prompts) => evaluator.prepare(prompts),
        evaluate: (p) => evaluator.evaluate(p),
        close: async () => {
          evaluator.close();
          await engine.close();
        },
      };
    } catch (e) {
      await engine.close();
      throw e;
    }
  },
  tokenize: (model, text) => loadTokenizer(model).encode(text),
};
