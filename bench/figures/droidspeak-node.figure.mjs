// droidspeak-node: the derived model's prefill on a node — its own, over the base model's KV with
// the E cache, and widened without it — per model pair.
import { figureSpec, groupedBars } from '../lib/plot.mjs';

export function figure(r) {
  // Constructed pairs (planted.pairs) are a test of the plan path, not a finding: labelled so.
  const pairs = [...r.pairs, ...(r.planted?.pairs ?? []).map((p) => ({ ...p, derived: `${p.derived}, constructed` }))];
  const rows = pairs.flatMap((p) => Object.entries(p.prefill_ms).map(([variant, ms]) => ({ pair: `${p.derived} (${p.reused_tokens}/${p.prompt_tokens} reused)`, variant, ms })));
  return figureSpec('DroidSpeak on the node: derived-model prefill (ms, median)', groupedBars({ rows, category: 'pair', series: 'variant', value: 'ms', valueTitle: 'prefill (ms)', seriesOrder: ['full_prefill', 'plan_with_e_cache', 'widened_no_e_cache'], horizontal: true, width: 420, height: 50 * pairs.length, format: '.1f' }));
}
