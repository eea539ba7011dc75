// DroidSpeak's headline keys with each hardware figure at −20% and +20%: the GPU's FLOP/s, its
// memory bandwidth (decode) and the InfiniBand link the KV and E cache come over. The workload,
// the profiles and the SLO rule stay; the SLO moves with full prefill's unloaded TTFT, as it is
// defined from it. A conclusion that held only at the tables' exact values shows here.
import { holds, targetOf } from '@mnemo/testkit';
import { DROIDSPEAK_SETUP, droidspeakExperiment } from './droidspeak.mjs';

const HEADLINE = targetOf('twin-droidspeak', 'droidspeak.throughput_vs_full_prefill_at_slo');
import { readProfiles } from './droidspeak-profiles.mjs';

const FIGURES = { gpu_flops: 'flopsScale', gpu_mem: 'memScale', infiniband: 'linkScale' };
const KEYS = [
  'throughput_vs_full_prefill_at_slo',
  'quality_loss_at_slo',
  'cheapest_within_floor_throughput_vs_full_prefill_at_slo',
  'fetch_share_of_prefill_half_plan_max',
  'constructed_throughput_vs_full_prefill_at_slo',
];

export function droidspeakRobustness({ s = DROIDSPEAK_SETUP, results = readProfiles(), progress = () => {} } = {}) {
  const rows = [];
  for (const [figure, knob] of Object.entries(FIGURES))
    for (const f of [0.8, 1.2]) {
      progress(`robustness ${figure} ×${f}`);
      const k = droidspeakExperiment({ s: { ...s, [knob]: s[knob] * f }, results }).droidspeak;
      rows.push({
        figure,
        scale: f,
        ...Object.fromEntries(KEYS.map((key) => [key, k[key]])),
        floor_10pct_cheapest: k.by_floor_cheapest['10pct']?.throughput_vs_full_prefill_at_slo ?? null,
      });
    }
  const range = (key) => [Math.min(...rows.map((r) => r[key])), Math.max(...rows.map((r) => r[key]))];
  return {
    rows,
    throughput_vs_full_prefill_at_slo_range: range('throughput_vs_full_prefill_at_slo'),
    cheapest_within_floor_range: range('cheapest_within_floor_throughput_vs_full_prefill_at_slo'),
    fetch_share_of_prefill_half_plan_max_range: range('fetch_share_of_prefill_half_plan_max'),
    constructed_throughput_range: range('constructed_throughput_vs_full_prefill_at_slo'),
    target_met_in_every_case: rows.every((r) => holds(r.throughput_vs_full_prefill_at_slo, HEADLINE)),
    fetch_share_within_paper_in_every_case: rows.every((r) => r.fetch_share_of_prefill_half_plan_max <= 0.11),
  };
}
