// droidspeak: per trained pair, the speed/quality curve — prefill speedup (log) against held-out
// top-1 loss of the profile's best plan for each number of recomputed layers (labelled), with the
// 1% floor as a dashed rule. The constructed pairs are a profiler test and stay out of it.
import { figureSpec, PALETTE } from '@mnemo/testkit';

export function figure(r) {
  const pairs = Array.isArray(r.pairs) ? r.pairs : Object.values(r.pairs);
  const rows = pairs.flatMap((p) =>
    p.curve.map((c) => ({
      pair: p.name ? `${p.name} (${p.kind})` : `${p.derived} (base ${p.base})`,
      recomputed: c.recomputed_layers,
      loss: c.test_loss,
      speedup: c.speedup,
      label: `${c.recomputed_layers}`,
    })),
  );
  const enc = {
    x: { field: 'loss', type: 'quantitative', title: 'held-out top-1 loss', axis: { format: '.0%' } },
    y: { field: 'speedup', type: 'quantitative', title: 'prefill speedup (×, log)', scale: { type: 'log' } },
    color: { field: 'pair', type: 'nominal', title: null, scale: { range: PALETTE }, legend: { labelLimit: 300, orient: 'top' } },
  };
  return figureSpec(
    [
      'DroidSpeak on the trained pairs: speedup against held-out top-1 loss',
      `one point per number of recomputed layers (label), of ${pairs[0]?.layers}; dashed: the ${(r.max_quality_loss * 100).toFixed(0)}% floor`,
    ],
    {
      data: { values: rows },
      width: 460,
      height: 260,
      layer: [
        { mark: { type: 'line', point: true }, encoding: { ...enc, order: { field: 'recomputed', type: 'quantitative' } } },
        { mark: { type: 'text', dx: 6, dy: -6, fontSize: 9 }, encoding: { ...enc, text: { field: 'label', type: 'nominal' } } },
        { mark: { type: 'rule', strokeDash: [4, 3], color: '#999' }, encoding: { x: { datum: r.max_quality_loss } } },
      ],
    },
  );
}
