import { Counter } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';

/** Why a derived model's request whose prefix the base holds did (or did not) reuse it. */
export type ReuseOutcome = 'reused' | 'no_plan' | 'plan_unavailable' | 'no_base_kv' | 'failed';

/** Cross-model (DroidSpeak) reuse on the node. */
export class DroidSpeakMetrics {
  readonly reuse: Counter<'outcome'>;
  readonly reusedTokens: Counter;

  constructor(metrics: ServiceMetrics) {
    const registers = [metrics.registry];
    this.reuse = new Counter({
      name: 'mnemo_node_droidspeak_reuse_total',
      help: "Derived-model prefills whose prompt prefix the base model held more of than the derived one, by outcome (reused, no_plan, plan_unavailable, no_base_kv, failed)",
      labelNames: ['outcome'],
      registers,
    });
    this.reusedTokens = new Counter({ name: 'mnemo_node_droidspeak_reused_tokens_total', help: "Prompt tokens prefilled over a base model's KV (partial prefill)", registers });
  }
}
