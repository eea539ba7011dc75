// The inputs of Symphony's experiment on the twin (§4, Figs. 11, 15, 19, 20): the run's shape, the
// paper's figures, the runs it is made of, and what the command line passes in (symphony.ports.ts).
import type { AdvisoryVariant } from '../../scenario/multiround.scenario.js';

export interface SymphonySetup {
  readonly users: readonly number[];
  readonly systems: readonly string[];
  /** Systems run at every user count; the others at `allSystemsUsers` only (each run costs minutes here). */
  readonly everyCount: readonly string[];
  readonly allSystemsUsers: readonly number[];
  readonly imbalanceUsers: number;
  /**
   * Fig. 15's metric (users held per instance) is read on a run of InferCept at `imbalanceUsers` measured this long after
   * the warm-up, ms: the paper states no run length, and sticky sessions accumulate over it. Absent: over the measured window.
   */
  readonly imbalanceWindowMs?: number;
  /** Where the InferCept and llm-d ratios and the advisory variants are read: the largest count all systems ran. */
  readonly compareUsers: number;
  readonly variantUsers: number;
  readonly thinkCompression: number;
  readonly rampMs: number;
  readonly warmMs: number;
  readonly untilMs: number;
  /**
   * A count below this measures for proportionally longer: the window (untilMs − warmMs) × windowUsers ÷ users, so every
   * count's p99 rests on about as many requests (measuredUntilMs). With one window for all, 64 users measured 368
   * requests, a p99 set by the fourth slowest, and which long first turn fell inside decided the routing comparison
   * there (on one seed symphony's window held a 2,371 ms first turn conductor's did not). Absent: one window for all.
   */
  readonly windowUsers?: number;
  readonly seed: number;
  /**
   * Symphony again at every count on this seed: the spread between two runs of one system that
   * differ only in their arrivals' draw is the noise of one run's p50 and p99 (a p99 over about a
   * thousand requests is set by a dozen), as the live multiround's A/A pass is.
   */
  readonly aaSeed?: number;
  /**
   * The routing baselines run on the A/A seed too: a p99 over about a thousand requests is set by a dozen, so one
   * seed's order of two routers can flip on the next (the keys' two-seed comparison reads both).
   */
  readonly aaBaselines?: readonly string[];
  /**
   * More draws for the routing comparison: symphony and the `aaBaselines` again on each of these seeds. At 256 and
   * 512 users two draws' p99s differed by 43–64 % (the A/A spread), so two seeds could not order routers whose
   * p99s sit a few ms apart; the comparison reads the mean over all four.
   */
  readonly routingSeeds?: readonly number[];
  /** TPOT SLO: this multiple of the paper's vLLM's mean TPOT at the smallest user count (Fig. 11: "a similar TPOT"). */
  readonly sloOverLightest: number;
  /**
   * Conductor's transfer threshold (Algorithm 1 publishes none): swept on another seed at `users`,
   * the value with the lowest mean TTFT then used in every conductor run here and in the live multiround.
   */
  readonly conductorSweep?: { readonly seed: number; readonly users: number; readonly thresholds: readonly number[] };
  /**
   * vLLM as the paper ran it (no prefix cache, no tiers: every turn recomputed), at every user count: the baseline
   * the paper-reproducing headlines divide by. `recompute` (vLLM with its prefix cache) is the baseline at its best.
   */
  readonly paperBaseline?: string;
}

/**
 * The run's shape. Think times are human (reading 5.5 tokens/s, typing to Symphony's 11.3 s lead)
 * compressed `thinkCompression`× so sessions reach their later turns within a few simulated
 * minutes (a run must end in minutes on two shared cores): a user then offers the load of about
 * that many human users. Requests sent in the first `warmMs` (ramp, first turns) are not measured.
 */
export const SYMPHONY_RUN: SymphonySetup = {
  users: [64, 128, 256, 512, 1024],
  systems: ['symphony', 'recompute', 'infercept', 'llmd', 'conductor'],
  everyCount: ['symphony', 'recompute', 'llmd', 'conductor'],
  allSystemsUsers: [256, 512],
  imbalanceUsers: 256,
  imbalanceWindowMs: 300_000,
  compareUsers: 512,
  variantUsers: 512,
  thinkCompression: 6,
  rampMs: 20_000,
  warmMs: 50_000,
  untilMs: 130_000,
  windowUsers: 256,
  seed: 1,
  aaSeed: 3,
  aaBaselines: ['llmd', 'conductor'],
  routingSeeds: [4, 5],
  sloOverLightest: 1.5,
  conductorSweep: { seed: 2, users: 256, thresholds: [1.25, 1.5, 2, 3, 4, 8] },
  paperBaseline: 'vllm-paper',
};

/** When a run at `users` stops: the measured window lengthened ×windowUsers ÷ users below windowUsers. */
export function measuredUntilMs(o: Pick<SymphonySetup, 'warmMs' | 'untilMs' | 'windowUsers'>, users: number): number {
  const stretch = o.windowUsers !== undefined && users > 0 && users < o.windowUsers ? o.windowUsers / users : 1;
  return o.warmMs + (o.untilMs - o.warmMs) * stretch;
}

/** A published figure the keys are compared with, and where the paper gives it. */
export interface SymphonyPaperFigure {
  readonly value: number | readonly number[];
  readonly where: string;
}

/** Symphony's published figures the keys are compared with (drawn over our curves). */
export const SYMPHONY_PAPER: Readonly<Record<string, SymphonyPaperFigure>> = {
  ttft_vs_vllm: { value: 2.4, where: '§4.2, Figs. 11b, 12b: up to 2.4×' },
  tpot_vs_vllm: { value: [1.4, 1.9], where: '§4.2, Fig. 11a: 1.4–1.9× on Llama-3.1-8B' },
  users_vs_vllm_at_slo: { value: 4, where: 'Fig. 11 caption: 64 users (vLLM, 18.5 ms) vs 256 (Symphony, 20.5 ms); §4.2: up to 8×' },
  infercept_imbalance_256: { value: 3.1, where: '§4.3, Fig. 15: max/median users held per instance 3.1× at 256 users' },
  vllm_tpot_64_ms: { value: 18.5, where: 'Fig. 11 caption: vLLM at 64 users, 18.5 ms TPOT' },
  missed10_degradation_ms: { value: 3.1, where: 'Fig. 19: 10% missed advisories, +3.1 ms normalized latency' },
  spurious60_degradation: { value: 0.021, where: 'Fig. 20: 60% spurious advisories, 2.1% throughput loss' },
};

/** One run of the experiment: a serving system at a user count, on a seed, and its curve's name. */
export interface SymphonyRunSpec {
  readonly name: string;
  readonly system: string;
  readonly users: number;
  /** The run's draw of sessions (the setup's seed when absent). */
  readonly seed?: number;
  readonly conductorThreshold?: number;
  readonly variant?: AdvisoryVariant;
  /** vLLM as the paper ran it: no prefix cache, no tiers. */
  readonly paperBaseline?: boolean;
  /** When the run stops, ms (measuredUntilMs when absent). */
  readonly untilMs?: number;
}

/** The curve Fig. 15's imbalance is read from when the setup gives it its own run length. */
export const FIG15_RUN = 'infercept-fig15';

/** The baselines that also run on the A/A and routing seeds (those among the systems). */
const routingBaselines = (o: SymphonySetup): string[] => ['symphony', ...(o.aaBaselines ?? []).filter((b) => o.systems.includes(b))];

/** Conductor runs with the swept threshold; no other system takes one. */
const threshold = (system: string, conductorThreshold: number | undefined) => (system === 'conductor' ? { conductorThreshold } : {});

/** Every run of the experiment, conductor's at `conductorThreshold` (the sweep's best). */
export function symphonyRuns(o: SymphonySetup, conductorThreshold: number | undefined): SymphonyRunSpec[] {
  const runs: SymphonyRunSpec[] = [];
  for (const u of o.users)
    for (const s of o.systems)
      if (o.everyCount.includes(s) || o.allSystemsUsers.includes(u))
        runs.push({ name: s, system: s, users: u, ...threshold(s, conductorThreshold) });
  if (o.paperBaseline) for (const u of o.users) runs.push({ name: o.paperBaseline, system: 'recompute', users: u, paperBaseline: true });
  // The A/A seed: symphony again, and the routing baselines on the same draw, so each comparison can be read over two seeds.
  if (o.aaSeed !== undefined)
    for (const u of o.users)
      for (const s of routingBaselines(o))
        runs.push({ name: `${s}-aa`, system: s, users: u, seed: o.aaSeed, ...threshold(s, conductorThreshold) });
  for (const seed of o.routingSeeds ?? [])
    for (const u of o.users)
      for (const s of routingBaselines(o))
        runs.push({ name: `${s}-seed${seed}`, system: s, users: u, seed, ...threshold(s, conductorThreshold) });
  if (o.imbalanceWindowMs !== undefined && o.systems.includes('infercept'))
    runs.push({ name: FIG15_RUN, system: 'infercept', users: o.imbalanceUsers, untilMs: o.warmMs + o.imbalanceWindowMs });
  runs.push({ name: 'symphony-missed10', system: 'symphony', users: o.variantUsers, variant: { missed: 0.1 } });
  runs.push({ name: 'symphony-spurious60', system: 'symphony', users: o.variantUsers, variant: { spurious: 0.6 } });
  return runs;
}

/** The conductor runs of the threshold sweep (none when the run has no conductor or no sweep). */
export function conductorSweepRuns(o: SymphonySetup): SymphonyRunSpec[] {
  if (!o.systems.includes('conductor') || !o.conductorSweep) return [];
  const { seed, users, thresholds } = o.conductorSweep;
  return thresholds.map((t) => ({ name: `conductor-sweep-${t}`, system: 'conductor', users, seed, conductorThreshold: t }));
}
