// DroidSpeak's serving experiment (§5.3 Fig. 15, §5.4 Fig. 16) on the twin over every trained pair
// and the constructed one: each pair's curves (pair.experiment.ts), its keys against full prefill,
// and the headline keys averaged over the trained pairs and by the paper's pair kinds.
import { MODELS } from '../../costs/hardware.tables.js';
import { profiledPairs, type DroidspeakProfiles, type ProfiledPair } from './droidspeak.profiles.js';
import {
  DROIDSPEAK_PAPER,
  DROIDSPEAK_SETUP,
  droidspeakHardware,
  floorKey,
  mean,
  round,
  workloadShape,
  type DroidspeakSetup,
} from './droidspeak.setup.js';
import { fetchShares, runPair, type FetchShares, type PairRun } from './pair.experiment.js';

/** One configuration's figures at the SLO against full prefill's. */
export interface FloorRow {
  readonly throughput_vs_full_prefill_at_slo: number | null;
  readonly quality_loss: number;
  readonly test_loss: number | null;
  readonly recomputed_layers: number | null;
}

/** A floor's figures averaged over the trained pairs. */
export interface MeanFloorRow {
  readonly throughput_vs_full_prefill_at_slo: number;
  readonly quality_loss: number;
  readonly test_loss: number | null;
  readonly recomputed_layers: number;
}

/** The keys of one pair's run. */
export interface PairKeys {
  readonly full_prefill_throughput_at_slo: number;
  readonly full_reuse: FloorRow;
  readonly at_task_floor: FloorRow | null;
  readonly by_floor: Readonly<Record<string, FloorRow>>;
  readonly by_floor_cheapest: Readonly<Record<string, FloorRow>>;
  readonly by_floor_fixed_budget: Readonly<Record<string, FloorRow>>;
  readonly slo_sensitivity: Readonly<Record<string, number | null>>;
}

/** Per pair kind of the paper's Table 1 (base_full_ft, full_ft_pair, base_lora, lora_pair). */
export interface KindKeys {
  readonly pairs: readonly string[];
  readonly throughput_vs_full_prefill_at_slo: number;
  readonly best_throughput_vs_full_prefill_at_slo: number;
  readonly test_loss_at_slo: number;
  readonly task_floor_throughput_vs_full_prefill_at_slo: number | null;
  readonly task_floor_best_throughput_vs_full_prefill_at_slo: number | null;
}

export interface DroidspeakKeys {
  readonly throughput_vs_full_prefill_at_slo: number;
  readonly quality_loss_at_slo: number;
  readonly test_loss_at_slo: number | null;
  readonly recomputed_layers_at_slo: number;
  readonly full_reuse_throughput_vs_full_prefill_at_slo: number;
  readonly full_reuse_quality_loss: number;
  readonly cheapest_within_floor_throughput_vs_full_prefill_at_slo: number;
  readonly by_floor: Readonly<Record<string, MeanFloorRow>>;
  readonly by_floor_cheapest: Readonly<Record<string, MeanFloorRow>>;
  readonly by_floor_fixed_budget: Readonly<Record<string, MeanFloorRow>>;
  readonly loosest_floor_tested: number | undefined;
  readonly smallest_floor_reaching_2x: number | null;
  readonly fetch_share_of_prefill_half_plan_max: number;
  readonly half_plans: Readonly<Record<string, string>>;
  readonly slo_sensitivity: Readonly<Record<string, number>>;
  readonly by_kind: Readonly<Record<string, KindKeys>>;
  readonly best_kind_throughput_vs_full_prefill_at_slo: number;
  readonly by_pair: Readonly<Record<string, PairKeys>>;
  readonly constructed_throughput_vs_full_prefill_at_slo: number | null;
  readonly constructed_quality_loss_at_slo: number | null;
  readonly constructed_fetch_share_max: number | null;
}

export interface HardwareSummary {
  readonly gpu: string;
  readonly bf16_tflops: number;
  readonly mem_gbs: number;
  readonly model: string;
  readonly layers: number;
  readonly link_gbs: number;
  readonly link_dispatch_ms: number;
  readonly kv_capacity_tokens: number;
}

export interface DroidspeakExperiment {
  readonly droidspeak: DroidspeakKeys;
  readonly paper: typeof DROIDSPEAK_PAPER;
  readonly setup: DroidspeakSetup & { readonly hardware: HardwareSummary; readonly profiles: string };
  readonly runs: Readonly<Record<string, PairRun>>;
  readonly fetch_shares: Readonly<Record<string, readonly FetchShares[]>>;
}

export interface DroidspeakOptions {
  readonly s?: DroidspeakSetup;
  /** bench/results/droidspeak.json as read. */
  readonly profiles: DroidspeakProfiles;
  readonly progress?: (label: string) => void;
}

const ratio = (a: number | null, b: number) => (a !== null && b > 0 ? round(a / b, 3) : null);
/** A pair without the figure counts 0. */
const orZero = (x: number | null) => x ?? 0;

/** The keys of one pair's run: each floor's throughput against full prefill, with the quality it cost. */
function pairKeys(r: PairRun, s: DroidspeakSetup): PairKeys {
  const base = r.configs['full-prefill'].throughput_at_slo;
  const row = (name: string): FloorRow => {
    const c = r.configs[name];
    return {
      throughput_vs_full_prefill_at_slo: ratio(c.throughput_at_slo, base),
      quality_loss: c.at_slo.quality_loss_mean ?? 0,
      test_loss: c.at_slo.test_loss_mean ?? null,
      recomputed_layers: c.at_slo.recomputed_layers_mean ?? null,
    };
  };
  const task = `mnemo-task@${s.headlineFloor * 100}%`;
  return {
    full_prefill_throughput_at_slo: base,
    full_reuse: row('full-reuse'),
    at_task_floor: r.configs[task] ? row(task) : null,
    by_floor: Object.fromEntries(s.floors.map((f) => [floorKey(f), row(`mnemo@${f * 100}%`)])),
    by_floor_cheapest: Object.fromEntries(s.floors.map((f) => [floorKey(f), row(`mnemo-cheapest@${f * 100}%`)])),
    by_floor_fixed_budget: Object.fromEntries(s.floors.map((f) => [floorKey(f), row(`mnemo-fixed-budget@${f * 100}%`)])),
    slo_sensitivity: Object.fromEntries(
      s.sloSensitivity.map((k) => [
        k,
        ratio(
          r.configs[`mnemo@${s.headlineFloor * 100}%`].throughput_at_slo_multiple[k],
          r.configs['full-prefill'].throughput_at_slo_multiple[k],
        ),
      ]),
    ),
  };
}

/** The whole experiment: every trained pair and the constructed one, the headline keys; `progress(label)` is told before each run. */
export function droidspeakExperiment({ s = DROIDSPEAK_SETUP, profiles, progress = () => {} }: DroidspeakOptions): DroidspeakExperiment {
  const pairs = profiledPairs(profiles).filter((p) => p.kind === 'trained' || p.name === s.constructed);
  const shape = workloadShape(s);
  const runs: Record<string, PairRun> = {};
  const keysBy: Record<string, PairKeys> = {};
  const fetch: Record<string, FetchShares[]> = {};
  for (const pair of pairs) {
    runs[pair.name] = runPair(pair, s, { shape, progress });
    keysBy[pair.name] = pairKeys(runs[pair.name], s);
    fetch[pair.name] = fetchShares(pair, s);
  }
  const trained = pairs.filter((p) => p.kind === 'trained').map((p) => p.name);
  const avg = (f: (name: string) => number | null) => round(mean(trained.map((n) => orZero(f(n)))), 3);
  const head = (name: string) => keysBy[name].by_floor[floorKey(s.headlineFloor)];
  // Fig. 16's plan halves prefill: on each trained frontier, the plan recomputing closest to half the layers.
  const L = MODELS[s.model].layers;
  const half = trained.map((n) => fetch[n].reduce((a, b) => (Math.abs(b.recomputed - L / 2) < Math.abs(a.recomputed - L / 2) ? b : a)));
  type FloorTable = 'by_floor' | 'by_floor_cheapest' | 'by_floor_fixed_budget';
  const floorRows = (k: FloorTable): Record<string, MeanFloorRow> =>
    Object.fromEntries(
      s.floors.map(floorKey).map((f) => [
        f,
        {
          throughput_vs_full_prefill_at_slo: avg((n) => keysBy[n][k][f].throughput_vs_full_prefill_at_slo),
          quality_loss: avg((n) => keysBy[n][k][f].quality_loss),
          test_loss: trained.every((n) => keysBy[n][k][f].test_loss !== null) ? avg((n) => keysBy[n][k][f].test_loss) : null,
          recomputed_layers: avg((n) => keysBy[n][k][f].recomputed_layers),
        },
      ]),
    );
  const byFloor = floorRows('by_floor');
  const byFloorCheapest = floorRows('by_floor_cheapest');
  const byFloorFixed = floorRows('by_floor_fixed_budget');
  const reaching2x = s.floors.filter(
    (f) => Math.max(...[byFloor, byFloorCheapest, byFloorFixed].map((b) => b[floorKey(f)].throughput_vs_full_prefill_at_slo)) >= 2,
  );
  const constructed: PairKeys | undefined = keysBy[s.constructed];
  const kinds = byKind(pairs, keysBy, head);
  const keys: DroidspeakKeys = {
    throughput_vs_full_prefill_at_slo: avg((n) => head(n).throughput_vs_full_prefill_at_slo),
    quality_loss_at_slo: avg((n) => head(n).quality_loss),
    test_loss_at_slo: trained.every((n) => head(n).test_loss !== null) ? avg((n) => head(n).test_loss) : null,
    recomputed_layers_at_slo: avg((n) => head(n).recomputed_layers),
    full_reuse_throughput_vs_full_prefill_at_slo: avg((n) => keysBy[n].full_reuse.throughput_vs_full_prefill_at_slo),
    full_reuse_quality_loss: avg((n) => keysBy[n].full_reuse.test_loss),
    cheapest_within_floor_throughput_vs_full_prefill_at_slo: avg(
      (n) => keysBy[n].by_floor_cheapest[floorKey(s.headlineFloor)].throughput_vs_full_prefill_at_slo,
    ),
    by_floor: byFloor,
    by_floor_cheapest: byFloorCheapest,
    by_floor_fixed_budget: byFloorFixed,
    loosest_floor_tested: s.floors.at(-1),
    smallest_floor_reaching_2x: reaching2x.length ? reaching2x[0] : null,
    fetch_share_of_prefill_half_plan_max: Math.max(...half.map((h) => h.max_fetch_share)),
    half_plans: Object.fromEntries(trained.map((n, i) => [n, half[i].pattern])),
    slo_sensitivity: Object.fromEntries(s.sloSensitivity.map((k) => [k, avg((n) => keysBy[n].slo_sensitivity[k])])),
    by_kind: kinds,
    best_kind_throughput_vs_full_prefill_at_slo: Math.max(...Object.values(kinds).map((k) => k.best_throughput_vs_full_prefill_at_slo)),
    by_pair: keysBy,
    constructed_throughput_vs_full_prefill_at_slo: constructed
      ? constructed.by_floor[floorKey(s.headlineFloor)].throughput_vs_full_prefill_at_slo
      : null,
    constructed_quality_loss_at_slo: constructed ? constructed.by_floor[floorKey(s.headlineFloor)].test_loss : null,
    constructed_fetch_share_max: fetch[s.constructed]?.length ? Math.max(...fetch[s.constructed].map((f) => f.max_fetch_share)) : null,
  };
  return {
    droidspeak: keys,
    paper: DROIDSPEAK_PAPER,
    setup: {
      ...s,
      hardware: hardwareSummary(s),
      profiles: 'bench/results/droidspeak.json (reference engine, trained pairs; planted pairs constructed)',
    },
    runs,
    fetch_shares: fetch,
  };
}

/** Per pair kind of the paper's Table 1: its pairs' mean and best throughput at the headline floor, top-1 and task metric. */
function byKind(pairs: readonly ProfiledPair[], keysBy: Readonly<Record<string, PairKeys>>, head: (name: string) => FloorRow) {
  const trained = pairs.filter((p) => p.kind === 'trained');
  const kinds = [...new Set(trained.map((p) => p.pairKind))];
  return Object.fromEntries(
    kinds.map((k): [string, KindKeys] => {
      const names = trained.filter((p) => p.pairKind === k).map((p) => p.name);
      const tput = names.map((n) => orZero(head(n).throughput_vs_full_prefill_at_slo));
      const task = names.map((n) => keysBy[n].at_task_floor?.throughput_vs_full_prefill_at_slo ?? null);
      return [
        String(k),
        {
          pairs: names,
          throughput_vs_full_prefill_at_slo: round(mean(tput), 3),
          best_throughput_vs_full_prefill_at_slo: Math.max(...tput),
          test_loss_at_slo: round(mean(names.map((n) => head(n).test_loss ?? 0)), 4),
          task_floor_throughput_vs_full_prefill_at_slo: task.every((t): t is number => t !== null) ? round(mean(task), 3) : null,
          task_floor_best_throughput_vs_full_prefill_at_slo: task.every((t): t is number => t !== null) ? Math.max(...task) : null,
        },
      ];
    }),
  );
}

function hardwareSummary(s: DroidspeakSetup): HardwareSummary {
  const hw = droidspeakHardware(s);
  return {
    gpu: hw.compute.gpu.name,
    bf16_tflops: hw.compute.gpu.bf16Flops / 1e12,
    mem_gbs: hw.compute.gpu.memBytesPerS / 1e9,
    model: hw.compute.model.name,
    layers: hw.compute.model.layers,
    link_gbs: hw.link.bytesPerMs / 1e6,
    link_dispatch_ms: hw.link.dispatchMs,
    kv_capacity_tokens: hw.kvCapacityTokens,
  };
}
