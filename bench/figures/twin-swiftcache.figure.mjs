// twin-swiftcache: the master's maximum context over vLLM chunked prefill 8K at the paper's memory
// points (Eq. 1–5 and Mnemo's two-plane stream), the P99 TTFT ratio against PCIe CPU offload per
// arrival rate (Mnemo's demand rule, the paper's lend-every-idle-unit, and a candidate rule that
// also counts recently reused sessions), and the master's KV
// traffic's share of a worker's HBM time per history length. Dashed rules: the paper's published
// figures (Fig. 9: 1.58–3.98×; Fig. 7: −54% and −58%, i.e. 2.17× and 2.38×; Fig. 8: ≤ 9.7%).
import { figureSpec, lineLayer, PALETTE } from '@mnemo/testkit';

function panel({ rows, x, xTitle, xScale, y, yTitle, yScale, rules, width = 260 }) {
  const enc = {
    x: { field: x, type: 'quantitative', title: xTitle, ...(xScale ? { scale: xScale } : {}) },
    y: { field: y, type: 'quantitative', title: yTitle, ...(yScale ? { scale: yScale } : {}) },
  };
  return {
    width,
    height: 220,
    layer: [
      lineLayer(rows, { ...enc, color: { field: 'series', type: 'nominal', title: null, scale: { range: PALETTE } } }),
      {
        data: { values: rules },
        mark: { type: 'rule', strokeDash: [4, 3], color: 'black' },
        encoding: { y: { field: 'value', type: 'quantitative' } },
      },
      {
        data: { values: rules },
        mark: { type: 'text', align: 'left', dx: 2, dy: -5, fontSize: 9, x: 0 },
        encoding: { y: { field: 'value', type: 'quantitative' }, text: { field: 'label' } },
      },
    ],
  };
}

export function figure(r) {
  const ctx = r.max_context.flatMap((c) => [
    { gb: c.gb, series: "Mnemo's stream (W = 2)", ratio: c.vs_chunked8k },
    { gb: c.gb, series: 'Eq. 1–5 (W = 1)', ratio: c.eq5_vs_chunked8k },
  ]);
  const [lo, hi] = r.paper.max_context_vs_chunked8k_range;
  const ttft = r.ttft.rates.flatMap((t) => [
    { rate: t.rate_per_s, series: 'live + recent sessions (node-manager)', ratio: t.p99_ratio },
    ...(t.p99_ratio_live_only === undefined
      ? []
      : [{ rate: t.rate_per_s, series: 'live requests only (earlier rule)', ratio: t.p99_ratio_live_only }]),
    { rate: t.rate_per_s, series: 'lend every idle unit (Alg. 1)', ratio: t.p99_ratio_lend_idle },
  ]);
  const paperTtft = r.paper.ttft_p99_vs_lmcache;
  const inter = [...r.interference.lengths.map((l) => ({ tokens: l.tokens, series: 'back to back, all lent', share: l.hbm_share }))];
  return figureSpec(
    `SwiftCache on the twin: ${r.setup.hardware.master.name} master, ${r.setup.workers.join(' + ')} workers, modelled ${r.setup.hardware.gpu.name} (dashed: the paper's figures)`,
    {
      hconcat: [
        panel({
          rows: ctx,
          x: 'gb',
          xTitle: 'GPU memory (GB)',
          y: 'ratio',
          yTitle: 'max context ÷ vLLM chunked 8K',
          rules: [
            { value: lo, label: `paper min ${lo}×` },
            { value: hi, label: `paper max ${hi}×` },
          ],
        }),
        panel({
          rows: ttft,
          x: 'rate',
          xTitle: 'arrivals (requests/s)',
          y: 'ratio',
          yTitle: 'P99 TTFT, offload ÷ SwiftCache',
          yScale: { type: 'log' },
          rules: Object.entries(paperTtft).map(([k, v]) => ({ value: Math.round(v * 100) / 100, label: `paper ${k}` })),
        }),
        panel({
          rows: inter,
          x: 'tokens',
          xTitle: 'history (tokens)',
          xScale: { type: 'log', base: 2 },
          y: 'share',
          yTitle: "share of a worker's HBM time",
          rules: [{ value: r.paper.worker_ttft_increase_max, label: 'paper ≤ 9.7%' }],
        }),
      ],
      resolve: { scale: { color: 'independent' } },
    },
  );
}
