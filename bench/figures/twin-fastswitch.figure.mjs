// twin-fastswitch: FastSwitch over vLLM-style per-block swaps on the twin, each headline ratio as a
// curve over the per-call copy dispatch (the median over seeds, each seed a light dot; log x; the derived 117 µs marked), the paper's published
// points drawn over them as rings at the derived dispatch (Fig. 8: P99 TTFT 3.7–4.1×, P99.9 TBT
// 2.0–2.7×; Table 1: 53% less swap-out; Fig. 10: block groups alone 3.11× less switching overhead,
// beside the twin's groups-only point as a square).
import { figureSpec, lineLayer, PALETTE } from '@mnemo/testkit';

const PANELS = [
  { key: 'p99_ttft_ratio', title: 'P99 TTFT, vLLM ÷ FastSwitch', log: true, paper: (p) => p.p99_ttft_speedup },
  { key: 'p999_tbt_ratio', title: 'P99.9 TBT, vLLM ÷ FastSwitch', log: true, paper: (p) => p.p999_tbt_speedup },
  { key: 'swap_out_reduction', title: 'swap-out blocks, reduction', log: false, paper: (p) => [p.swap_out_reduction] },
  {
    key: 'switch_overhead_ratio',
    title: 'switching overhead, vLLM ÷ FastSwitch',
    log: true,
    paper: (p) => [p.groups_switch_overhead_speedup],
    ablation: 'groups-only',
  },
];

function panel(r, p) {
  const derived = r.setup.derived_dispatch_us;
  const ok = (x) => Number.isFinite(x.value) && (!p.log || x.value > 0);
  const rows = r.curve.map((c) => ({ dispatch_us: c.dispatch_us, value: c[p.key] })).filter(ok);
  const seeds = r.curve.flatMap((c) => (c.by_seed ?? []).map((b) => ({ dispatch_us: c.dispatch_us, value: b[p.key] }))).filter(ok);
  const paper = p.paper(r.paper).map((value) => ({ dispatch_us: derived, value, label: `paper ${value}` }));
  const extra =
    p.ablation && Number.isFinite(r.ablation[p.ablation]?.[p.key])
      ? [{ dispatch_us: derived, value: r.ablation[p.ablation][p.key], label: `twin ${p.ablation}` }]
      : [];
  const x = { field: 'dispatch_us', type: 'quantitative', scale: { type: 'log' }, title: 'per-call dispatch (µs)' };
  const y = { field: 'value', type: 'quantitative', title: p.title, ...(p.log ? { scale: { type: 'log' } } : {}) };
  return {
    width: 260,
    height: 200,
    layer: [
      { data: { values: seeds }, mark: { type: 'point', size: 20, color: PALETTE[5] }, encoding: { x, y } },
      lineLayer(rows, { x, y }, { color: PALETTE[0] }),
      { data: { values: [{ dispatch_us: derived }] }, mark: { type: 'rule', strokeDash: [4, 3], color: '#999' }, encoding: { x } },
      {
        data: { values: paper },
        mark: { type: 'point', shape: 'circle', size: 110, filled: false, color: 'black', strokeWidth: 1.5 },
        encoding: { x, y },
      },
      {
        data: { values: [...paper, ...extra] },
        mark: { type: 'text', align: 'left', dx: 8, fontSize: 9 },
        encoding: { x, y, text: { field: 'label' } },
      },
      ...(extra.length
        ? [{ data: { values: extra }, mark: { type: 'point', shape: 'square', size: 80, color: PALETTE[1] }, encoding: { x, y } }]
        : []),
    ],
  };
}

export function figure(r) {
  return figureSpec(
    [
      `FastSwitch on the twin: Llama-8B on a modelled A10, ${r.setup.workload.conversations} conversations, Markov priorities at f = ${r.setup.frequencies[0]}`,
      `rings: the paper's points at the derived dispatch (${r.setup.derived_dispatch_us} µs, dashed)`,
    ],
    {
      hconcat: PANELS.map((p) => panel(r, p)),
    },
  );
}
