// droidspeak-node: on the node's path (base KV and E cache fetched from the tiers), the speedup
// each trained pair's curve plan gives per number of recomputed layers, labelled with its
// held-out loss; below, the constructed pairs' prefill times (a path test, labelled so).
import { figureSpec, groupedBars } from '@mnemo/testkit';

export function figure(r) {
  const curve = r.pairs.flatMap((p) =>
    p.curve
      .filter((c) => c.recomputed_layers < p.layers)
      .map((c) => ({
        pair: p.name ?? p.derived,
        plan: `recompute ${c.recomputed_layers} of ${p.layers}`,
        speedup: c.speedup,
        label: `${c.pattern}: ${c.speedup}×, loss ${(c.test_loss * 100).toFixed(1)}%`,
      })),
  );
  const planted = (r.planted?.pairs ?? []).flatMap((p) =>
    Object.entries(p.prefill_ms).map(([variant, ms]) => ({ pair: `${p.derived}, constructed`, variant, ms })),
  );
  return figureSpec('DroidSpeak on the node: base KV and E cache fetched from the tiers, fetch counted', {
    vconcat: [
      {
        title: "trained pairs: speedup over the derived model's own prefill per recomputed layers (label: held-out top-1 loss)",
        ...groupedBars({
          rows: curve,
          category: 'plan',
          series: 'pair',
          value: 'speedup',
          valueTitle: 'speedup (×)',
          label: 'label',
          horizontal: true,
          rule: 1,
          width: 420,
          height: 26 * curve.length,
        }),
      },
      {
        title: 'constructed pairs (planted critical layers): prefill ms, median',
        ...groupedBars({
          rows: planted,
          category: 'pair',
          series: 'variant',
          value: 'ms',
          valueTitle: 'prefill (ms)',
          seriesOrder: ['full_prefill', 'plan_host_tier', 'plan_from_peer', 'widened_no_e_cache'],
          horizontal: true,
          width: 420,
          height: 60 * (r.planted?.pairs.length ?? 0),
          format: '.1f',
        }),
      },
    ],
    resolve: { scale: { color: 'independent' } },
  });
}
