import { Counter, Gauge } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';

/** Why a derived model's request whose prefix the base holds did (or did not) reuse it. */
export type ReuseOutcome = 'reused' | 'no_plan' | 'plan_unavailable' | 'no_base_kv' | 'failed';

/** Cross-model (DroidSpeak) reuse on the node. */
export class DroidSpeakMetrics {
  readonly reuse: Counter<'outcome'>;
  readonly reusedTokens: Counter;

  /** `eCacheBytes`: host bytes the base models' E caches take now (read at scrape time). */
  constructor(metrics: ServiceMetrics, eCacheBytes: () => number = () => 0) {
    const registers = [metrics.registry];
    this.reuse = new Counter({
      name: 'mnemo_node_droidspeak_reuse_total',
      help:
        'Derived-model prefills whose prompt prefix the base model held more of than the ' +
        'derived one, by outcome (reused, no_plan, plan_unavailable, no_base_kv, failed)',
      labelNames: ['outcome'],
      registers,
    });
    new Gauge({
      name: 'mnemo_node_droidspeak_e_cache_bytes',
      help: "Host memory held by base models' E caches at their pairs' transition layers",
      registers,
      collect() {
        this.set(eCacheBytes());
      },
    });
    this.reusedTokens = new Counter({
      name: 'mnemo_node_droidspeak_reused_tokens_total',
      help: "Prompt tokens prefilled over a base model's KV (partial prefill)",
      registers,
    });
  }
}
