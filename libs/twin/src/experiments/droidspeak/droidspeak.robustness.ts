// DroidSpeak's headline keys with each hardware figure at −20% and +20%: the GPU's FLOP/s, its
// memory bandwidth (decode) and the InfiniBand link the KV and E cache come over. The workload,
// the profiles and the SLO rule stay; the SLO moves with full prefill's unloaded TTFT, as it is
// defined from it. A conclusion that held only at the tables' exact values shows here.
import type { TargetCheck } from '../shared/experiment.ports.js';
import { droidspeakExperiment, type DroidspeakKeys } from './droidspeak.experiment.js';
import type { DroidspeakProfiles } from './droidspeak.profiles.js';
import { DROIDSPEAK_SETUP, type DroidspeakSetup } from './droidspeak.setup.js';

const FIGURES = { gpu_flops: 'flopsScale', gpu_mem: 'memScale', infiniband: 'linkScale' } as const;
type RowKey =
  | 'throughput_vs_full_prefill_at_slo'
  | 'quality_loss_at_slo'
  | 'cheapest_within_floor_throughput_vs_full_prefill_at_slo'
  | 'fetch_share_of_prefill_half_plan_max'
  | 'constructed_throughput_vs_full_prefill_at_slo';

/** Robustness cases run: each figure at two scales. */
export const DROIDSPEAK_ROBUSTNESS_CASES = Object.keys(FIGURES).length * 2;

export type DroidspeakRobustnessRow = { readonly figure: string; readonly scale: number } & Pick<DroidspeakKeys, RowKey> & {
    readonly floor_10pct_cheapest: number | null;
  };

export interface DroidspeakRobustness {
  readonly rows: readonly DroidspeakRobustnessRow[];
  readonly throughput_vs_full_prefill_at_slo_range: readonly [number, number];
  readonly cheapest_within_floor_range: readonly [number, number];
  readonly fetch_share_of_prefill_half_plan_max_range: readonly [number, number];
  readonly constructed_throughput_range: readonly [number, number];
  readonly target_met_in_every_case: boolean;
  readonly fetch_share_within_paper_in_every_case: boolean;
}

export interface DroidspeakRobustnessOptions {
  readonly s?: DroidspeakSetup;
  /** bench/results/droidspeak.json as read. */
  readonly profiles: DroidspeakProfiles;
  /** Judges the headline, `droidspeak.throughput_vs_full_prefill_at_slo`, in each row. */
  readonly holds: TargetCheck;
  readonly progress?: (label: string) => void;
}

/** The ±20% rows; `progress(label)` is told before each case. */
export function droidspeakRobustness({
  s = DROIDSPEAK_SETUP,
  profiles,
  holds,
  progress = () => {},
}: DroidspeakRobustnessOptions): DroidspeakRobustness {
  const rows: DroidspeakRobustnessRow[] = [];
  for (const [figure, knob] of Object.entries(FIGURES))
    for (const f of [0.8, 1.2]) {
      progress(`robustness ${figure} ×${f}`);
      const k = droidspeakExperiment({ s: { ...s, [knob]: s[knob] * f }, profiles }).droidspeak;
      rows.push({
        figure,
        scale: f,
        throughput_vs_full_prefill_at_slo: k.throughput_vs_full_prefill_at_slo,
        quality_loss_at_slo: k.quality_loss_at_slo,
        cheapest_within_floor_throughput_vs_full_prefill_at_slo: k.cheapest_within_floor_throughput_vs_full_prefill_at_slo,
        fetch_share_of_prefill_half_plan_max: k.fetch_share_of_prefill_half_plan_max,
        constructed_throughput_vs_full_prefill_at_slo: k.constructed_throughput_vs_full_prefill_at_slo,
        floor_10pct_cheapest: k.by_floor_cheapest['10pct']?.throughput_vs_full_prefill_at_slo ?? null,
      });
    }
  // A row without the figure (no constructed pair) counts 0.
  const range = (key: RowKey): [number, number] => {
    const xs = rows.map((r) => r[key] ?? 0);
    return [Math.min(...xs), Math.max(...xs)];
  };
  return {
    rows,
    throughput_vs_full_prefill_at_slo_range: range('throughput_vs_full_prefill_at_slo'),
    cheapest_within_floor_range: range('cheapest_within_floor_throughput_vs_full_prefill_at_slo'),
    fetch_share_of_prefill_half_plan_max_range: range('fetch_share_of_prefill_half_plan_max'),
    constructed_throughput_range: range('constructed_throughput_vs_full_prefill_at_slo'),
    target_met_in_every_case: rows.every((r) => holds('droidspeak.throughput_vs_full_prefill_at_slo', r.throughput_vs_full_prefill_at_slo)),
    fetch_share_within_paper_in_every_case: rows.every((r) => r.fetch_share_of_prefill_half_plan_max <= 0.11),
  };
}
