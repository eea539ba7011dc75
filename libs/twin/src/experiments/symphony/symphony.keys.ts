// The Symphony experiment's keys (the results file's `symphony`): its ratios against each baseline,
// the users each system serves within the TPOT SLO, Fig. 15's imbalance, the advisory variants'
// cost, and the routing comparisons read against noise (symphony.noise.ts).
import { roundFigure as round, type Curves } from '../shared/paper-run.js';
import {
  aaNoise,
  neverBehind,
  overSeeds,
  pairedOverSeeds,
  type AaNoise,
  type OverSeeds,
  type PairedOverSeeds,
  type SymphonyRunFigures,
} from './symphony.noise.js';
import { FIG15_RUN, SYMPHONY_RUN, type SymphonySetup } from './symphony.setup.js';

/** The curve Fig. 15's imbalance is read from: its own longer run where the setup gives one. */
export const fig15 = (o: SymphonySetup): string => (o.imbalanceWindowMs !== undefined ? FIG15_RUN : 'infercept');

/** A figure of a run the keys divide or compare. */
type Metric =
  'ttft_mean_ms' | 'tpot_mean_ms' | 'ttft_p50_ms' | 'ttft_p99_ms' | 'imbalance_max_over_median' | 'imbalance_users_max_over_median';

/** Per user count: baseline ÷ symphony. */
type ByUsers = Record<number, number | null>;

export type SymphonyKeys = {
  readonly ttft_vs_vllm: number | null;
  readonly tpot_vs_vllm: number | null;
  readonly users_vs_vllm_at_slo: number | null;
  readonly users_vs_vllm_at_slo_is_lower_bound: boolean;
  readonly ttft_vs_infercept: number | null;
  readonly ttft_vs_llmd: number | null;
  readonly ttft_vs_conductor: number | null;
  readonly never_behind: boolean;
  readonly infercept_imbalance_256: number | null;
  /** The same over the experiment's measured window (where the other systems' imbalance is read). */
  readonly infercept_imbalance_256_measured_window: number | null;
  readonly infercept_imbalance_256_requests_held: number | null;
  readonly vllm_baseline: string;
  readonly vs_best_vllm: {
    readonly ttft_vs_vllm: number | null;
    readonly tpot_vs_vllm: number | null;
    readonly users_vs_vllm_at_slo: number | null;
  };
  readonly missed10_degradation: number | null;
  readonly spurious60_degradation: number | null;
  readonly by_users: Readonly<Record<string, ByUsers>>;
  readonly imbalance_256: Readonly<Record<string, number | null>>;
  readonly tpot_slo_ms: number | null;
  readonly users_within_slo: Readonly<Record<string, number | null>>;
  readonly definitions: Readonly<Record<string, string>>;
} & AaNoise &
  OverSeeds &
  PairedOverSeeds;

const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? round(a / b, 2) : null);

/** The experiment's keys from its curves (the runs' summaries, or only the figures a spec gives them). */
export function symphonyKeys(curves: Curves<SymphonyRunFigures>, o: SymphonySetup = SYMPHONY_RUN): SymphonyKeys {
  const at = (name: string, users: number, metric: Metric): number | null => curves[name]?.[users]?.[metric] ?? null;
  const common = (a: string, b: string) =>
    Object.keys(curves[a] ?? {})
      .filter((u) => curves[b]?.[Number(u)])
      .map(Number);
  const over = (base: string, metric: Metric): ByUsers =>
    Object.fromEntries(common('symphony', base).map((u) => [u, ratio(at(base, u, metric), at('symphony', u, metric))]));
  const top = o.users.at(-1);
  // The paper's headlines divide by the paper's vLLM where the run has it; the best vLLM's ratios are reported beside.
  const vllm0 = o.paperBaseline && curves[o.paperBaseline] ? o.paperBaseline : 'recompute';
  // A baseline with no TPOT at the lightest count has an SLO of 0 (JavaScript's null × x).
  const slo = (at(vllm0, o.users[0], 'tpot_mean_ms') ?? 0) * o.sloOverLightest;
  const served = (name: string) => {
    const ok = o.users.filter((u) => {
      const tpot = at(name, u, 'tpot_mean_ms');
      return tpot !== null && tpot <= slo;
    });
    return ok.length ? Math.max(...ok) : null;
  };
  const ttftVsVllm = over(vllm0, 'ttft_mean_ms');
  const tpotVsVllm = over(vllm0, 'tpot_mean_ms');
  const ttftVsBest = over('recompute', 'ttft_mean_ms');
  const tpotVsBest = over('recompute', 'tpot_mean_ms');
  const sym = served('symphony');
  const vllm = served(vllm0);
  const bestServed = served('recompute');
  const base = curves.symphony?.[o.variantUsers];
  // Number(): a null TPOT reads as 0 and an absent one as NaN, as JavaScript's `/` reads them.
  const change = (v: SymphonyRunFigures | undefined) =>
    base && v ? round(Number(v.tpot_mean_ms) / Number(base.tpot_mean_ms) - 1, 3) : null;
  const max = (m: ByUsers) => {
    const xs = Object.values(m).filter((x): x is number => x !== null);
    return xs.length ? Math.max(...xs) : null;
  };
  return {
    ttft_vs_vllm: max(ttftVsVllm),
    tpot_vs_vllm: max(tpotVsVllm),
    users_vs_vllm_at_slo: sym && vllm ? round(sym / vllm, 2) : null,
    users_vs_vllm_at_slo_is_lower_bound: sym === top,
    ttft_vs_infercept: ratio(at('infercept', o.compareUsers, 'ttft_mean_ms'), at('symphony', o.compareUsers, 'ttft_mean_ms')),
    ttft_vs_llmd: ratio(at('llmd', o.compareUsers, 'ttft_mean_ms'), at('symphony', o.compareUsers, 'ttft_mean_ms')),
    ttft_vs_conductor: ratio(at('conductor', o.compareUsers, 'ttft_mean_ms'), at('symphony', o.compareUsers, 'ttft_mean_ms')),
    never_behind: neverBehind(curves, ['llmd', 'conductor'], o),
    ...aaNoise(curves, ['llmd', 'conductor'], o),
    ...overSeeds(curves, ['llmd', 'conductor'], o),
    ...pairedOverSeeds(curves, ['llmd', 'conductor'], o),
    infercept_imbalance_256: at(fig15(o), o.imbalanceUsers, 'imbalance_users_max_over_median'),
    infercept_imbalance_256_measured_window: at('infercept', o.imbalanceUsers, 'imbalance_users_max_over_median'),
    infercept_imbalance_256_requests_held: at('infercept', o.imbalanceUsers, 'imbalance_max_over_median'),
    vllm_baseline: vllm0,
    // Mnemo's own claim: against vLLM at its best (its prefix cache on), no paper band.
    vs_best_vllm: {
      ttft_vs_vllm: max(ttftVsBest),
      tpot_vs_vllm: max(tpotVsBest),
      users_vs_vllm_at_slo: sym && bestServed ? round(sym / bestServed, 2) : null,
    },
    missed10_degradation: change(curves['symphony-missed10']?.[o.variantUsers]),
    spurious60_degradation: change(curves['symphony-spurious60']?.[o.variantUsers]),
    by_users: {
      ttft_vs_vllm: ttftVsVllm,
      tpot_vs_vllm: tpotVsVllm,
      ttft_vs_best_vllm: ttftVsBest,
      tpot_vs_best_vllm: tpotVsBest,
      ttft_vs_infercept: over('infercept', 'ttft_mean_ms'),
      ttft_vs_llmd: over('llmd', 'ttft_mean_ms'),
      ttft_vs_conductor: over('conductor', 'ttft_mean_ms'),
      ttft_p50_vs_llmd: over('llmd', 'ttft_p50_ms'),
      ttft_p99_vs_llmd: over('llmd', 'ttft_p99_ms'),
      ttft_p50_vs_conductor: over('conductor', 'ttft_p50_ms'),
      ttft_p99_vs_conductor: over('conductor', 'ttft_p99_ms'),
    },
    imbalance_256: Object.fromEntries(o.systems.map((s) => [s, at(s, o.imbalanceUsers, 'imbalance_max_over_median')])),
    tpot_slo_ms: round(slo, 2),
    users_within_slo: {
      symphony: sym,
      [vllm0]: vllm,
      recompute: bestServed,
      infercept: served('infercept'),
      llmd: served('llmd'),
      conductor: served('conductor'),
    },
    definitions: {
      ratios:
        `mean of the baseline ÷ mean of symphony at the same users; ttft_vs_vllm and tpot_vs_vllm are the largest over the sweep ` +
        `(the paper's "up to"); ttft_vs_infercept and ttft_vs_llmd at ${o.compareUsers} users (the largest count every system ran)`,
      users_vs_vllm_at_slo:
        `largest swept user count whose mean TPOT is within the SLO (${o.sloOverLightest}× recompute's mean TPOT at ${o.users[0]} ` +
        'users), symphony ÷ recompute; a lower bound when symphony meets the SLO at the top of the sweep',
      imbalance:
        `Fig. 15's metric: users held per instance (distinct sessions each instance served in the ` +
        `${((o.imbalanceWindowMs ?? o.untilMs - o.warmMs) / 1000).toString()} s after the warm-up, sticky sessions accumulating), ` +
        `max ÷ median over the 8 instances; _measured_window: the same over the ${(o.untilMs - o.warmMs) / 1000} s the other ` +
        'systems are measured in; _requests_held: requests running and waiting sampled every second, averaged per instance',
      degradation: `symphony's mean TPOT with the variant ÷ without, − 1, at ${o.variantUsers} users`,
    },
  };
}
