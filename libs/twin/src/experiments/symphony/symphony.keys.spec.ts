import { symphonyKeys } from './symphony.keys.js';
import { FIG15_RUN, SYMPHONY_RUN } from './symphony.setup.js';

// The keys from curves made up here; the experiment that produces real ones runs in tools/twin/symphony.spec.ts,
// on the papers' workload drawn by testkit's generator.
describe(symphonyKeys.name, () => {
  it('compares the routers on the requests both runs of a seed measured, not on which turns each reached', () => {
    // Symphony's users reached one long turn (z) that conductor's did not: its plain p99 is behind, on the shared turns it is not.
    const run = (byRequest: Record<string, number>) => {
      const xs = Object.values(byRequest).sort((a, b) => a - b);
      return { 64: { ttft_p99_ms: xs.at(-1)!, ttft_p50_ms: xs[Math.floor(xs.length / 2)]!, ttft_by_request: byRequest } };
    };
    const shared = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`u${i}#0`, 100 + i]));
    const slower = Object.fromEntries(Object.entries(shared).map(([k, v]) => [k, v * 1.1]));
    const sym = run({ ...shared, 'u99#4': 5000 });
    const other = run(slower);
    const o = { ...SYMPHONY_RUN, users: [64], routingSeeds: [] };
    const curves = { symphony: sym, 'symphony-aa': sym, llmd: other, 'llmd-aa': other, conductor: other, 'conductor-aa': other };
    const k = symphonyKeys(curves, o);
    expect(k.never_behind_over_seeds?.value).toBe(false);
    expect(k.never_behind_paired).toEqual({ value: true, failing: [] });
    expect(k.paired_over_seeds?.ratios.conductor.ttft_p99[64]).toBeCloseTo(1.1, 3);
    expect(k.paired_over_seeds?.common_share.conductor[64]).toBeCloseTo(20 / 21, 3);
  });

  it.each([
    // symphony behind the baseline on one seed, ahead over both: the two-seed verdict holds
    { name: 'one seed behind, both ahead', sym: [100, 60], symAa: [100, 40], other: [90, 60], otherAa: [120, 60], value: true },
    // behind on both seeds: it fails, however close
    { name: 'behind on both', sym: [100, 60], symAa: [100, 60], other: [99, 60], otherAa: [99, 60], value: false },
    // behind on both, far ahead on a third seed every router ran: the mean over three holds
    {
      name: 'a third seed',
      sym: [100, 60],
      symAa: [100, 60],
      other: [99, 60],
      otherAa: [99, 60],
      third: [
        [100, 60],
        [200, 60],
      ],
      value: true,
    },
  ])('reads each baseline over the seeds every router ran on: $name', ({ sym, symAa, other, otherAa, third, value }) => {
    const at = ([p99, p50]: number[]) => ({ 64: { ttft_p99_ms: p99, ttft_p50_ms: p50, ttft_mean_ms: 50, tpot_mean_ms: 10 } });
    const o = { ...SYMPHONY_RUN, users: [64] };
    const curves = { symphony: at(sym!), 'symphony-aa': at(symAa!), recompute: at([200, 100]) };
    // Seed 4's runs (o.routingSeeds [4, 5]); seed 5 never ran, so it is left out.
    const seed4: Record<string, ReturnType<typeof at>> = third
      ? { 'symphony-seed4': at(third[0]!), 'llmd-seed4': at(third[1]!), 'conductor-seed4': at([500, 500]) }
      : {};
    const k = symphonyKeys(
      { ...curves, ...seed4, llmd: at(other!), 'llmd-aa': at(otherAa!), conductor: at([500, 500]), 'conductor-aa': at([500, 500]) },
      o,
    );
    expect(k.never_behind_over_seeds).toMatchObject({ value });
    const [s, b] = third
      ? [sym![0]! + symAa![0]! + third[0]![0]!, other![0]! + otherAa![0]! + third[1]![0]!]
      : [sym![0]! + symAa![0]!, other![0]! + otherAa![0]!];
    expect(k.over_seeds?.ratios.llmd.ttft_p99[64]).toBeCloseTo(b / s, 3);
    expect(k.over_seeds?.seeds).toEqual(third ? [1, 3, 4] : [1, 3]);
  });

  it('derives users at the SLO from the curves: the largest count within it, a lower bound at the top of the sweep', () => {
    const curve = (tpots: number[]) => Object.fromEntries(tpots.map((t, i) => [[64, 128, 256][i], { tpot_mean_ms: t, ttft_mean_ms: 100 }]));
    const o = { ...SYMPHONY_RUN, users: [64, 128, 256] };
    const k = symphonyKeys({ recompute: curve([10, 20, 40]), symphony: curve([10, 11, 12]) }, o);
    expect(k.tpot_slo_ms).toBe(15);
    expect(k.users_within_slo).toMatchObject({ symphony: 256, recompute: 64 });
    expect(k.users_vs_vllm_at_slo).toBe(4);
    expect(k.users_vs_vllm_at_slo_is_lower_bound).toBe(true);
    expect(k.tpot_vs_vllm).toBeCloseTo(40 / 12, 2);
  });
});

describe("symphonyKeys: Fig. 15's imbalance", () => {
  const held = (ratio: number) => ({ 256: { imbalance_users_max_over_median: ratio, imbalance_max_over_median: 1.1 } });
  const curves = { infercept: held(1.2), [FIG15_RUN]: held(1.05) };

  it('is read on its own longer run where the setup gives one, with the measured window beside it', () => {
    const k = symphonyKeys(curves, { ...SYMPHONY_RUN, users: [256], imbalanceWindowMs: 300_000 });
    expect(k.infercept_imbalance_256).toBe(1.05);
    expect(k.infercept_imbalance_256_measured_window).toBe(1.2);
  });

  it('is read on the measured window without one', () => {
    const k = symphonyKeys(curves, { ...SYMPHONY_RUN, users: [256], imbalanceWindowMs: undefined });
    expect(k.infercept_imbalance_256).toBe(1.2);
  });
});
