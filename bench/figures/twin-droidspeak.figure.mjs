// twin-droidspeak: P90 TTFT against the arrival rate per configuration on the twin (one trained
// pair and the constructed one), the paper's Fig. 15 throughput (2× and 3× full prefill's rate at
// the SLO) drawn as rings on the SLO line; throughput at the SLO ÷ full prefill for each quality
// floor with the quality loss it cost; and Fig. 16's fetch share of prefill against context length,
// the paper's 11% drawn as a rule.
import { contextAxis, figureSpec, groupedBars, lineLayer, PALETTE, paperRings } from '@mnemo/testkit';

const pct = (f) => `${Math.round(f * 1000) / 10}%`;

function ttftPanel(r) {
  const trained = Object.keys(r.droidspeak.by_pair).find((n) => n !== r.setup.constructed);
  const run = r.runs[trained];
  const floor = r.setup.headlineFloor;
  const lines = [
    [trained, 'full-prefill', 'full prefill'],
    [trained, 'full-reuse', `full reuse (loss ${pct(r.droidspeak.by_pair[trained].full_reuse.test_loss)})`],
    [trained, `mnemo@${floor * 100}%`, `Mnemo plans, ${pct(floor)} floor`],
    [trained, 'mnemo-cheapest@10%', 'Mnemo cheapest, 10% floor'],
    [trained, 'mnemo@15%', 'Mnemo plans, 15% floor'],
    [trained, 'mnemo-fixed-budget@15%', 'wait not charged, 15% floor'],
    [r.setup.constructed, `mnemo@${floor * 100}%`, `constructed pair, ${pct(floor)} floor`],
  ];
  const rows = lines.flatMap(([pair, config, label]) =>
    (r.runs[pair]?.configs[config]?.curve ?? []).map((c) => ({ config: label, rate: c.rate, ttft: c.ttft_p90_s })),
  );
  const base = run.configs['full-prefill'].throughput_at_slo;
  const paper = r.paper.throughput_vs_full_prefill.value.map((k) => ({
    rate: base * k,
    ttft: run.slo_p90_ttft_s,
    label: `paper Fig. 15: ${k}×`,
  }));
  const x = { field: 'rate', type: 'quantitative', scale: { type: 'log' }, title: 'arrival rate (requests/s)' };
  const y = { field: 'ttft', type: 'quantitative', scale: { type: 'log' }, title: `P90 TTFT (s), ${trained}` };
  return {
    width: 340,
    height: 260,
    layer: [
      lineLayer(
        rows,
        { x, y, color: { field: 'config', type: 'nominal', title: null, sort: lines.map((l) => l[2]), scale: { range: PALETTE } } },
        { clip: true },
      ),
      {
        data: { values: [{ ttft: run.slo_p90_ttft_s }] },
        mark: { type: 'rule', strokeDash: [4, 3], color: '#999' },
        encoding: { y: { field: 'ttft', type: 'quantitative' } },
      },
      ...paperRings(paper, x, y, { align: 'left', dx: 8, dy: -8 }),
    ],
  };
}

function throughputBars(r) {
  const k = r.droidspeak;
  const rows = [];
  const series = [
    [k.by_floor, 'Mnemo (SLO less the wait)'],
    [k.by_floor_cheapest, 'cheapest within floor'],
    [k.by_floor_fixed_budget, 'wait not charged (budget = SLO)'],
  ];
  for (const [byFloor, name] of series)
    for (const [floor, v] of Object.entries(byFloor))
      rows.push({
        floor: `${floor.replace('pct', '%')} floor`,
        series: name,
        value: v.throughput_vs_full_prefill_at_slo,
        label: `${v.throughput_vs_full_prefill_at_slo}× · ${pct(v.quality_loss)}`,
      });
  rows.push({
    floor: 'full reuse',
    series: 'cheapest within floor',
    value: k.full_reuse_throughput_vs_full_prefill_at_slo,
    label: `${k.full_reuse_throughput_vs_full_prefill_at_slo}× · ${pct(k.full_reuse_quality_loss)}`,
  });
  if (k.constructed_throughput_vs_full_prefill_at_slo !== null)
    rows.push({
      floor: 'constructed, 1% floor',
      series: 'Mnemo (SLO less the wait)',
      value: k.constructed_throughput_vs_full_prefill_at_slo,
      label: `${k.constructed_throughput_vs_full_prefill_at_slo}× · ${pct(k.constructed_quality_loss_at_slo)}`,
    });
  return groupedBars({
    rows,
    category: 'floor',
    series: 'series',
    value: 'value',
    valueTitle: 'throughput at the SLO ÷ full prefill (label: × · quality loss)',
    log: true,
    label: 'label',
    rule: 2,
    width: 300,
  });
}

function fetchPanel(r) {
  const rows = [];
  for (const [pair, plans] of Object.entries(r.fetch_shares)) {
    const pick = pair === r.setup.constructed ? plans : plans.filter((p) => p.pattern === r.droidspeak.half_plans[pair]);
    for (const p of pick)
      for (const row of p.rows)
        rows.push({
          plan: `${pair} ${p.pattern} (${p.recomputed}/${r.setup.hardware.layers})`,
          tokens: row.tokens,
          share: row.fetch_share,
        });
  }
  const x = contextAxis(r.setup.contexts);
  const y = { field: 'share', type: 'quantitative', title: 'KV + E cache fetch ÷ prefill', axis: { format: '%' } };
  return {
    width: 300,
    height: 260,
    layer: [
      lineLayer(rows, { x, y, color: { field: 'plan', type: 'nominal', title: null, scale: { range: PALETTE.slice(5) } } }),
      {
        data: { values: [{ share: r.paper.fetch_share_of_prefill_max.value, label: 'paper Fig. 16: ≤ 11%' }] },
        layer: [
          { mark: { type: 'rule', strokeDash: [4, 3], color: 'black' }, encoding: { y: { field: 'share', type: 'quantitative' } } },
          {
            mark: { type: 'text', align: 'left', x: 4, dy: -6, fontSize: 9 },
            encoding: { y: { field: 'share', type: 'quantitative' }, text: { field: 'label' } },
          },
        ],
      },
    ],
  };
}

export function figure(r) {
  return figureSpec(
    `DroidSpeak on the twin: ${r.setup.hardware.model} on a modelled ${r.setup.hardware.gpu}, base KV and E cache over ${r.setup.hardware.link_gbs} GB/s InfiniBand, the trained pairs' measured profiles (rings and rule: the paper's points)`,
    {
      hconcat: [ttftPanel(r), throughputBars(r), fetchPanel(r)],
      resolve: { scale: { color: 'independent' } },
    },
  );
}
