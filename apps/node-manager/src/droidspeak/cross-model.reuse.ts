import { chunkKeys, recomputedLayers, reusesNothing, withoutTransition, type PlanChoice, type PlanRequest } from '@mnemo/kv-core';
import type { CrossModelPlan, PrefillInput, TokenOutput } from '@mnemo/engine';
import type { Sequence } from '../batching/sequence.js';
import type { StoredPrompt } from '../kv-store/kv.store.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { DroidSpeakMetrics, ReuseOutcome } from './droidspeak.metrics.js';
import type { DroidSpeakSettings } from './droidspeak.settings.js';

/** What the batch scheduler asks: the cross-model plan source of a request, if it could have one. */
export interface CrossModelPort {
  crossModelFor(seq: Sequence): PrefillInput['crossModel'];
}

export const CROSS_MODEL_REUSE = Symbol('CROSS_MODEL_REUSE');

export const NO_CROSS_MODEL: CrossModelPort = { crossModelFor: () => undefined };

/** The plan source (ReusePlanCache): a plan from a cached frontier, never a round trip. */
export interface CachedPlans {
  cachedPlan(base: string, derived: string, req: PlanRequest): PlanChoice | null | undefined;
}

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

/**
 * DroidSpeak on the node: a derived model's request whose prompt its base model holds more of
 * (the base's chunk keys under the same tenant salt, on this node's tiers or a kv_sources
 * peer) than the derived model itself prefills that prefix over the base's KV, under the plan
 * the profiler's frontier gives within the quality floor. Asked by the engine at prefill time,
 * once the derived model's own device prefix is known: a derived model that has any of the
 * prompt on its device stays exact. Every other case — DroidSpeak off, no plan, the plan service
 * not answering, nothing of the base's stored — is an ordinary prefill; this never fails a request.
 *
 * The KV store keeps KV, not E caches, so a plan with a transition layer runs widened to
 * (0, 0, r2) (kv-core `withoutTransition`).
 */
export class CrossModelReuse implements CrossModelPort {
  constructor(
    private readonly settings: DroidSpeakSettings,
    private readonly plans: CachedPlans,
    private readonly prompts: PromptStore,
    /** Layers of a served model's KV; undefined when the engine keeps no KV bytes. */
    private readonly layersOf: (model: string) => number | undefined,
    /** Queued prefill work in prefills (the plan choice's load). */
    private readonly load: () => number,
    private readonly metrics: DroidSpeakMetrics,
  ) {}

  crossModelFor(seq: Sequence): PrefillInput['crossModel'] {
    const base = this.settings.bases.get(seq.request.model);
    if (!this.settings.enabled || !base) return undefined;
    return (deviceTokens) => (deviceTokens > 0 ? undefined : this.plan(seq, base));
  }

  private plan(seq: Sequence, base: string): CrossModelPlan | undefined {
    const r = seq.request;
    const layers = this.layersOf(r.model);
    if (layers === undefined || this.layersOf(base) !== layers) return undefined;
    const sources = r.kvSources.map((k) => ({ nodeId: k.nodeId, address: k.grpcAddress, chunkKeys: k.chunkKeys }));
    const own: StoredPrompt = { model: r.model, chunkKeys: r.chunkKeys, promptTokens: r.tokens.length, ...(sources.length > 0 ? { sources } : {}) };
    const baseKeys = chunkKeys(base, r.tenant, r.tokens);
    if (baseKeys.length === 0) return undefined;
    const basePrompt: StoredPrompt = { ...own, model: base, chunkKeys: baseKeys };
    if (this.prompts.restorableUntil(basePrompt, 0) <= this.prompts.restorableUntil(own, 0)) return undefined;
    let choice: PlanChoice | null | undefined;
    try {
      choice = this.plans.cachedPlan(base, r.model, { maxQualityLoss: this.settings.maxQualityLoss, load: this.load(), ...(this.settings.latencyBudgetMs ? { latencyBudgetMs: this.settings.latencyBudgetMs } : {}) });
    } catch {
      choice = undefined;
    }
    if (choice === undefined) return this.skip('plan_unavailable');
    if (choice === null) return this.skip('no_plan');
    let pattern;
    try {
      pattern = withoutTransition(choice.point.pattern, layers);
    } catch {
      // A frontier of another layer count (re-registered model): no usable plan.
      return this.skip('no_plan');
    }
    if (reusesNothing(pattern, layers)) return this.skip('no_plan');
    const restore = this.prompts.restorePlan(basePrompt, 0);
    if (!restore) return this.skip('no_base_kv');
    const until = restore.until;
    return {
      baseModel: base,
      pattern,
      until,
      load: (l) => restore.load(l),
      done: (ok) => {
        restore.done?.(ok);
        this.metrics.reuse.inc({ outcome: ok ? 'reused' : 'failed' });
        if (ok) this.metrics.reusedTokens.inc(until);
      },
    };
  }

  private skip(outcome: ReuseOutcome): undefined {
    this.metrics.reuse.inc({ outcome });
    return undefined;
  }
}
