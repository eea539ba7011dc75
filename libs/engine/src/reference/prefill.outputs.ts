import type { CrossModelPlan, PrefillInput, TokenOutput } from '../engine.interface.js';
import type { PlannedRestore } from './paged-kv.restore.js';

/** What one prefill batch learnt per sequence, by sequence id. */
export interface PrefillResults {
  /** The sampled token; a sequence released mid-step has none. */
  readonly outputs: ReadonlyMap<string, number>;
  /** Prompt tokens not computed (device prefix hit plus restore). */
  readonly cached: ReadonlyMap<string, number>;
  readonly plans: ReadonlyMap<string, PlannedRestore>;
  readonly crosses: ReadonlyMap<string, CrossModelPlan>;
  readonly eCaches: ReadonlyMap<string, Map<number, Float32Array>>;
}

/** The batch's outputs in input order, leaving out sequences released while their step ran. */
export function prefillOutputs(batch: readonly PrefillInput[], r: PrefillResults): TokenOutput[] {
  return batch
    .filter((b) => r.outputs.has(b.seqId))
    .map((b) => {
      const restored = r.plans.has(b.seqId) ? r.plans.get(b.seqId)!.plan.until - r.plans.get(b.seqId)!.from : 0;
      const cross = r.crosses.get(b.seqId);
      const crossModel = cross
        ? { crossModel: { baseModel: cross.baseModel, pattern: { ...cross.pattern }, reusedTokens: cross.until } }
        : {};
      const e = r.eCaches.get(b.seqId);
      return {
        seqId: b.seqId,
        token: r.outputs.get(b.seqId)!,
        cachedTokens: r.cached.get(b.seqId)!,
        restoredTokens: restored,
        ...crossModel,
        ...(e ? { eCache: e } : {}),
      };
    });
}
