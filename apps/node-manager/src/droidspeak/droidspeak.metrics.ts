import type { Counter } from 'prom-client';
import { metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';

/** Why a derived model's request whose prefix the base holds did (or did not) reuse it. */
export type ReuseOutcome = 'reused' | 'no_plan' | 'plan_unavailable' | 'no_base_kv' | 'failed';

/** Cross-model (DroidSpeak) reuse on the node. */
export class DroidSpeakMetrics {
  readonly reuse: Counter<'outcome'>;
  readonly reusedTokens: Counter;

  /** `eCacheBytes`: host bytes the base models' E caches take now (read at scrape time). */
  constructor(metrics: ServiceMetrics, eCacheBytes: () => number = () => 0) {
    const { counter, sampled } = metricBuilders(metrics.registry);
    this.reuse = counter(
      'mnemo_node_droidspeak_reuse_total',
      'Derived-model prefills whose prompt prefix the base model held more of than the ' +
        'derived one, by outcome (reused, no_plan, plan_unavailable, no_base_kv, failed)',
      ['outcome'],
    );
    sampled(
      'mnemo_node_droidspeak_e_cache_bytes',
      "Host memory held by base models' E caches at their pairs' transition layers",
      eCacheBytes,
    );
    this.reusedTokens = counter(
      'mnemo_node_droidspeak_reused_tokens_total',
      "Prompt tokens prefilled over a base model's KV (partial prefill)",
    );
  }
}
