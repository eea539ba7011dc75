// The Symphony experiment's panels: mean TPOT and TTFT against users per system (Fig. 11's
// published points over them), TTFT ratios against the paper's 2.4×, imbalance at 256 users.
const line = (curve, metric) => Object.entries(curve ?? {}).map(([u, s]) => [Number(u), s[metric]]);

export function paperPanels(curves, keys, o) {
  const systems = o.systems;
  const pick = (metric) => Object.fromEntries(systems.map((s) => [s, line(curves[s], metric)]));
  const ratios = Object.fromEntries(['recompute', 'infercept', 'llmd'].map((b) => [b, Object.entries(keys.by_users[`ttft_vs_${b === 'recompute' ? 'vllm' : b}`] ?? {}).map(([u, r]) => [Number(u), r])]));
  const imbalance = Object.fromEntries(systems.map((s, i) => [s, [[i + 1, keys.imbalance_256[s]]]]));
  return [
    {
      title: 'mean TPOT (ms) — twin, A100 × 8, Llama-3.1-8B',
      xLabel: 'users',
      yLabel: 'ms',
      logX: true,
      series: pick('tpot_mean_ms'),
      paper: [
        { x: 64, y: 18.5, label: 'paper vLLM 64' },
        { x: 256, y: 20.5, label: 'paper Symphony 256' },
      ],
      hline: keys.tpot_slo_ms ? { y: keys.tpot_slo_ms, label: 'SLO' } : undefined,
    },
    { title: 'mean TTFT (ms)', xLabel: 'users', yLabel: 'ms', logX: true, series: pick('ttft_mean_ms') },
    { title: 'TTFT: baseline ÷ symphony', xLabel: 'users', yLabel: '×', logX: true, series: ratios, paper: [{ x: 256, y: 2.4, label: 'paper: up to 2.4× vs vLLM' }], hline: { y: 1, label: 'parity' } },
    { title: `instance load max ÷ median at ${o.imbalanceUsers} users`, xLabel: systems.map((s, i) => `${i + 1} ${s}`).join(' · '), yLabel: '×', series: imbalance, paper: [{ x: systems.indexOf('infercept') + 1, y: 3.1, label: 'paper InferCept 3.1×' }] },
  ];
}
