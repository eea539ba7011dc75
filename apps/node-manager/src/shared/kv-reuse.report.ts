import { recomputedLayers } from '@mnemo/kv-core';
import type { TokenOutput } from '@mnemo/engine';

/** Usage report of a cross-model prefill (proto `KvReuse`). */
export interface KvReuseReport {
  readonly baseModel: string;
  readonly r1: number;
  readonly u1: number;
  readonly r2: number;
  readonly recomputedLayers: number[];
  readonly reusedTokens: number;
}

/** The usage report of a prefill the engine ran under a cross-model plan. */
export function kvReuseReport(ran: NonNullable<TokenOutput['crossModel']>, layers: number): KvReuseReport {
  const { r1, u1, r2 } = ran.pattern;
  return { baseModel: ran.baseModel, r1, u1, r2, recomputedLayers: recomputedLayers(ran.pattern, layers), reusedTokens: ran.reusedTokens };
}
