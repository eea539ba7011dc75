// droidspeak: per model pair, prefill time of the derived model's own full prefill, the profiled
// plan and full reuse of the base model's KV, each with its top-1 agreement.
import { figureSpec, groupedBars } from '../lib/plot.mjs';

export function figure(r) {
  const rows = r.pairs.flatMap((p) => {
    const pair = `${p.base} → ${p.derived}`;
    const plan = `plan ${p.chosen_pattern.r1}-${p.chosen_pattern.u1}-${p.chosen_pattern.r2}: `;
    return [
      ['full prefill', p.prefill_ms.full_prefill, p.full_prefill_quality_loss],
      ['plan', p.prefill_ms.plan, p.quality_loss],
      ['full reuse', p.prefill_ms.full_reuse, p.full_reuse_quality_loss],
    ].map(([variant, ms, loss]) => ({ pair, variant, ms, label: `${variant === 'plan' ? plan : ''}${ms} ms, top-1 ${((1 - loss) * 100).toFixed(1)}%` }));
  });
  return figureSpec(
    ['DroidSpeak: derived-model prefill per pair', `profiled plans within ${(r.max_quality_loss * 100).toFixed(0)}% top-1 loss`],
    groupedBars({ rows, category: 'pair', series: 'variant', value: 'ms', valueTitle: 'derived-model prefill (ms)', seriesOrder: ['full prefill', 'plan', 'full reuse'], label: 'label', horizontal: true, width: 420, height: 60 * r.pairs.length }),
  );
}
