import { ErrorCode } from '../errors/error-code.enum.js';
import { MnemoError } from '../errors/mnemo.error.js';

/**
 * DroidSpeak §4.2 reuse pattern recompute → reuse → recompute → reuse as three layer
 * indices: recompute [0, r1), reuse the base model's KV for [r1, u1), recompute
 * [u1, r2) starting from the base model's E cache at u1 (the one transition layer),
 * reuse KV for [r2, L). `{r1: 0, u1: 0, r2: L}` recomputes everything.
 */
export interface ReusePattern {
  readonly r1: number;
  readonly u1: number;
  readonly r2: number;
}

/** What partial prefill does at each layer. */
export type LayerAction = 'compute' | 'reuse-skip' | 'reuse-query';

export interface ReusePlan {
  readonly actions: readonly LayerAction[];
  /** Layer whose E cache must be supplied, or null when the hidden state flows through. */
  readonly eLayer: number | null;
  readonly recomputed: number;
}

export function recomputeAll(layers: number): ReusePattern {
  return { r1: 0, u1: 0, r2: layers };
}

/** Throws InvalidRequest unless 0 ≤ r1 ≤ u1 ≤ r2 ≤ layers (all integers). */
export function validateReusePattern(p: ReusePattern, layers: number): void {
  const { r1, u1, r2 } = p;
  if (![r1, u1, r2].every(Number.isInteger)) {
    throw new MnemoError(ErrorCode.InvalidRequest, `reuse pattern (${r1}, ${u1}, ${r2}) must be integers`);
  }
  if (!(0 <= r1 && r1 <= u1 && u1 <= r2 && r2 <= layers)) {
    throw new MnemoError(ErrorCode.InvalidRequest, `reuse pattern (${r1}, ${u1}, ${r2}) must satisfy 0 ≤ r1 ≤ u1 ≤ r2 ≤ ${layers}`, {
      r1,
      u1,
      r2,
      layers,
    });
  }
}

/**
 * Per-layer actions. Reused layers take the supplied KV for every token. When a
 * recompute range follows, the hidden state restarts from the E cache at u1, so a
 * reused layer before it needs no computation ('reuse-skip'). Reused layers with no
 * recomputation after them still have to carry the last prompt token up to the head:
 * that one row runs as a query over the reused KV ('reuse-query').
 */
export function planReuse(p: ReusePattern, layers: number): ReusePlan {
  validateReusePattern(p, layers);
  const { r1, u1, r2 } = p;
  const restarts = r1 < u1 && u1 < layers;
  const actions: LayerAction[] = [];
  for (let l = 0; l < layers; l++) {
    if (l < r1) actions.push('compute');
    else if (l < u1) actions.push(restarts ? 'reuse-skip' : 'reuse-query');
    else if (l < r2) actions.push('compute');
    else actions.push('reuse-query');
  }
  return { actions, eLayer: restarts ? u1 : null, recomputed: r1 + (r2 - u1) };
}
