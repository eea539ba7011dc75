import {
  chunkKeys,
  planReuse,
  reusesNothing,
  withoutTransition,
  type PlanChoice,
  type PlanRequest,
  type ReusePattern,
} from '@mnemo/kv-core';
import type { CrossModelPlan, PrefillInput } from '@mnemo/engine';
import type { Clock } from '@mnemo/service-kit';
import type { Sequence } from '../shared/sequence.js';
import type { StoredPrompt } from '../kv-store/kv.store.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { DroidSpeakMetrics, ReuseOutcome } from './droidspeak.metrics.js';
import type { DroidSpeakSettings } from '../config/droidspeak.settings.js';
import type { ECacheTier } from './e-cache.tier.js';

/** What the batch scheduler asks: the cross-model plan source of a request, if it could have one. */
export interface CrossModelPort {
  crossModelFor(seq: Sequence): PrefillInput['crossModel'];
  /** Transition layers whose E caches a base model's prefill should return (for its pairs' plans). */
  captureFor?(seq: Sequence): readonly number[] | undefined;
  /** Keeps the E caches a base model's prefill returned. */
  storeE?(seq: Sequence, eCache: ReadonlyMap<number, Float32Array>): void;
}

export const CROSS_MODEL_REUSE = Symbol('CROSS_MODEL_REUSE');

export const NO_CROSS_MODEL: CrossModelPort = { crossModelFor: () => undefined };

/** The plan source (ReusePlanCache): a plan from a cached frontier, never a round trip. */
export interface CachedPlans {
  cachedPlan(base: string, derived: string, req: PlanRequest): PlanChoice | null | undefined;
  peek(base: string, derived: string): { readonly frontier: ReadonlyArray<{ readonly pattern: ReusePattern }> } | undefined;
}

/**
 * DroidSpeak on the node: a derived model's request whose prompt its base model holds more of
 * (the base's chunk keys under the same tenant salt, on this node's tiers or a kv_sources
 * peer) than the derived model itself prefills that prefix over the base's KV, under the plan
 * the profiler's frontier gives within the quality floor, chosen at the node's load with the time
 * the request already waited since admission charged against the latency budget (kv-core
 * `choosePlan`: a request that queued moves to a cheaper plan sooner). Asked by the engine at prefill time,
 * once the derived model's own device prefix is known: a derived model that has any of the
 * prompt on its device stays exact. Every other case — DroidSpeak off, no plan, the plan service
 * not answering, nothing of the base's stored — is an ordinary prefill; this never fails a request.
 *
 * A plan with a transition layer u1 needs the base's E cache there: a base model's wholly
 * computed prefill returns it at the transition layers of its pairs' frontiers and it is kept in
 * the KV tiers like a chunk (`ECacheTier`: host and SSD pools, journaled, served to peers); it
 * comes from there or from a `kv_sources` peer listing its keys. Where it is missing (evicted,
 * corrupt, never captured) the plan runs widened to (0, 0, r2) (kv-core `withoutTransition`).
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
    /** The clock the request's `arrivedMs` was read from (its wait is now − arrivedMs). */
    private readonly clock: Clock,
    private readonly metrics: DroidSpeakMetrics,
    private readonly eCaches?: ECacheTier,
  ) {}

  captureFor(seq: Sequence): readonly number[] | undefined {
    if (!this.settings.enabled || !this.eCaches) return undefined;
    const layers = new Set<number>();
    for (const [derived, base] of this.settings.bases) {
      if (base !== seq.request.model) continue;
      const entry = this.plans.peek(base, derived);
      // Not here yet: start fetching it, so later prompts of this base keep their E caches.
      if (!entry) this.plans.cachedPlan(base, derived, { maxQualityLoss: 1, load: 0 });
      const L = this.layersOf(base);
      for (const p of entry?.frontier ?? []) {
        try {
          const e = L === undefined ? null : planReuse(p.pattern, L).eLayer;
          if (e !== null) layers.add(e);
        } catch {
          // A frontier of another layer count has nothing to capture.
        }
      }
    }
    return layers.size > 0 ? [...layers].sort((a, b) => a - b) : undefined;
  }

  storeE(seq: Sequence, eCache: ReadonlyMap<number, Float32Array>): void {
    for (const [layer, e] of eCache) this.eCaches?.put(seq.request.model, seq.request.chunkKeys, layer, e, seq.request.tokens.length);
  }

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
    const own: StoredPrompt = {
      model: r.model,
      chunkKeys: r.chunkKeys,
      promptTokens: r.tokens.length,
      ...(sources.length > 0 ? { sources } : {}),
    };
    const baseKeys = chunkKeys(base, r.tenant, r.tokens);
    if (baseKeys.length === 0) return undefined;
    const basePrompt: StoredPrompt = { ...own, model: base, chunkKeys: baseKeys };
    if (this.prompts.restorableUntil(basePrompt, 0) <= this.prompts.restorableUntil(own, 0)) return undefined;
    let choice: PlanChoice | null | undefined;
    try {
      const waitedMs = Math.max(0, this.clock.monotonicMs() - seq.arrivedMs);
      choice = this.plans.cachedPlan(base, r.model, {
        maxQualityLoss: this.settings.maxQualityLoss,
        qualityMetric: this.settings.qualityMetrics.get(r.model) ?? 'top1',
        load: this.load(),
        waitedMs,
        ...(this.settings.latencyBudgetMs ? { latencyBudgetMs: this.settings.latencyBudgetMs } : {}),
      });
    } catch {
      choice = undefined;
    }
    if (choice === undefined) return this.skip('plan_unavailable');
    if (choice === null) return this.skip('no_plan');
    const chosen = choice.point.pattern;
    let eLayer: number | null;
    let widened: ReusePattern;
    try {
      eLayer = planReuse(chosen, layers).eLayer;
      widened = withoutTransition(chosen, layers);
    } catch {
      // A frontier of another layer count (re-registered model): no usable plan.
      return this.skip('no_plan');
    }
    const reach = this.prompts.restorableUntil(basePrompt, 0);
    const eReady = eLayer !== null && this.eCaches?.available(base, baseKeys, eLayer, reach, sources) === true;
    if (!eReady && reusesNothing(widened, layers)) return this.skip('no_plan');
    const restore = this.prompts.restorePlan(basePrompt, 0);
    if (!restore) return this.skip('no_base_kv');
    const until = restore.until;
    const e = eLayer === null ? undefined : this.eCaches?.source(base, baseKeys, eLayer, until, sources);
    const pattern = eLayer === null || e ? chosen : widened;
    if (reusesNothing(pattern, layers)) {
      restore.done?.(false);
      return this.skip('no_plan');
    }
    return {
      baseModel: base,
      pattern,
      until,
      load: (l) => restore.load(l),
      ...(e ? { loadE: () => e.load() } : {}),
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
