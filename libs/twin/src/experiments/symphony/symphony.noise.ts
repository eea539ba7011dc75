// Reading symphony's routing comparisons against noise: the twin's Symphony experiment runs symphony twice (its
// seed and the A/A seed) and the routing baselines on both seeds, and a p99 over about a thousand requests is set
// by a dozen of them, so these verdicts say how far one seed's order can be trusted.
import { percentile } from '@mnemo/kv-core';
import { roundFigure as round, type Curves, type PaperRunSummary } from '../shared/paper-run.js';
import type { SymphonySetup } from './symphony.setup.js';

/** What the noise verdicts read of a run: some figures of a whole summary (a spec's curves carry only these). */
export type SymphonyRunFigures = Partial<PaperRunSummary>;

/** A verdict and the comparisons that failed it. */
export interface Verdict {
  readonly value: boolean;
  readonly failing: readonly string[];
}

/** Per baseline, per figure (`ttft_p50`, `ttft_p99`), per user count: baseline ÷ symphony. */
export type SeedRatios = Record<string, Record<string, Record<number, number | null>>>;

export interface AaNoise {
  readonly noise?: Record<string, Record<number, number | null>>;
  readonly never_behind_beyond_noise?: Verdict;
}

export interface OverSeeds {
  readonly over_seeds?: { readonly seeds: readonly (number | undefined)[]; readonly ratios: SeedRatios };
  readonly never_behind_over_seeds?: Verdict;
}

export interface PairedOverSeeds {
  readonly paired_over_seeds?: {
    readonly seeds: readonly (number | undefined)[];
    readonly common_share: Record<string, Record<number, number | null>>;
    readonly ratios: SeedRatios;
  };
  readonly never_behind_paired?: Verdict;
}

const METRICS = ['ttft_p50_ms', 'ttft_p99_ms'] as const;

// A missing figure (null or absent) is never positive: it fails the checks below instead of passing them.
const positive = (x: number | null | undefined): x is number => typeof x === 'number' && x > 0;

/**
 * Symphony at least as good as each of `others` at p50 and p99 at every user count both ran
 * (false where one ran at no count, or where symphony is behind at any).
 */
export function neverBehind(curves: Curves<SymphonyRunFigures>, others: readonly string[], o: SymphonySetup): boolean {
  return others.every((b) => {
    const counts = o.users.filter((u) => curves.symphony?.[u] && curves[b]?.[u]);
    // Number(): a null figure compares as 0 and an absent one as nothing, as JavaScript's `<=` reads them.
    return (
      counts.length === o.users.length &&
      counts.every((u) => METRICS.every((m) => Number(curves.symphony[u][m]) <= Number(curves[b][u][m])))
    );
  });
}

/**
 * The A/A spread at each count (|symphony − symphony on aaSeed| ÷ the smaller, for p50 and p99) and
 * the verdict read with it: symphony's ratio to each of `others` (other ÷ symphony) at least
 * 1 − that count's spread, at p50 and p99, at every count. Nothing when the run has no A/A pass.
 */
export function aaNoise(curves: Curves<SymphonyRunFigures>, others: readonly string[], o: SymphonySetup): AaNoise {
  if (!curves['symphony-aa']) return {};
  const spread = (u: number, m: (typeof METRICS)[number]) => {
    const [a, b] = [curves.symphony?.[u]?.[m], curves['symphony-aa']?.[u]?.[m]];
    return positive(a) && positive(b) ? round(Math.abs(a - b) / Math.min(a, b), 3) : null;
  };
  const noise = Object.fromEntries(
    METRICS.map((m) => [
      m.replace('ttft_', 'aa_spread_ttft_').replace('_ms', ''),
      Object.fromEntries(o.users.map((u) => [u, spread(u, m)])),
    ]),
  );
  const failing: string[] = [];
  for (const b of others)
    for (const u of o.users)
      for (const m of METRICS) {
        const [sym, other, sp] = [curves.symphony?.[u]?.[m], curves[b]?.[u]?.[m], spread(u, m)];
        if (!(positive(sym) && positive(other) && sp !== null)) failing.push(`${b} @ ${u}: ${m} not run`);
        else if (other / sym < 1 - sp) failing.push(`${b} @ ${u}: ${m} ${round(other / sym, 3)} < 1 − ${sp}`);
      }
  return { noise, never_behind_beyond_noise: { value: failing.length === 0, failing } };
}

/** The routing seeds every one of `others` and symphony ran on. */
const extraSeeds = (curves: Curves<SymphonyRunFigures>, others: readonly string[], o: SymphonySetup): number[] =>
  (o.routingSeeds ?? []).filter((k) => [...others, 'symphony'].every((s) => curves[`${s}-seed${k}`]));

/**
 * Each comparison over every seed the routers ran on (the experiment's, the A/A seed and `routingSeeds`): at every
 * count, the baseline's figure averaged over its runs ÷ symphony's averaged the same way
 * (`over_seeds.<other>.<metric>[users]`), so a tail that one draw puts on either side counts once in four.
 * `never_behind_over_seeds`: every such ratio at least 1, at p50 and p99, for every baseline at every count; nothing
 * when a baseline did not run on the A/A seed.
 */
export function overSeeds(curves: Curves<SymphonyRunFigures>, others: readonly string[], o: SymphonySetup): OverSeeds {
  if (!others.every((b) => curves[`${b}-aa`]) || !curves['symphony-aa']) return {};
  const extra = extraSeeds(curves, others, o);
  const names = (s: string) => [s, `${s}-aa`, ...extra.map((k) => `${s}-seed${k}`)];
  const avg = (s: string, u: number, m: (typeof METRICS)[number]): number | null => {
    const xs = names(s).map((n) => curves[n]?.[u]?.[m]);
    return xs.every(positive) ? xs.reduce((a: number, b) => a + b, 0) / xs.length : null;
  };
  const failing: string[] = [];
  const ratios = Object.fromEntries(
    others.map((b) => [
      b,
      Object.fromEntries(
        METRICS.map((m) => [
          m.replace('_ms', ''),
          Object.fromEntries(
            o.users.map((u) => {
              const [sym, other] = [avg('symphony', u, m), avg(b, u, m)];
              const r = sym && other ? round(other / sym, 3) : null;
              if (r === null) failing.push(`${b} @ ${u}: ${m} not run on every seed`);
              else if (r < 1) failing.push(`${b} @ ${u}: ${m} ${r} < 1`);
              return [u, r];
            }),
          ),
        ]),
      ),
    ]),
  );
  return {
    over_seeds: { seeds: [o.seed, o.aaSeed, ...extra], ratios },
    never_behind_over_seeds: { value: failing.length === 0, failing },
  };
}

/**
 * The same comparison over the same requests. A closed-loop run measures the turns its users reach inside the window,
 * and which of the longest sessions' long later turns fall in it moves with every system's pace: the p99 sits a few
 * ms above the p99 of the measured requests' own prefills alone (`ttft_floor_ms`), and that floor differs by up to
 * 8 % between two systems' runs on one seed (at 512 users on the A/A seed, 2,672 ms under symphony against 2,468 ms
 * under conductor), so the plain p99 ratio reads which turns were measured as much as how they were served. Here each
 * pair of runs on one seed (symphony and a baseline) is read over the requests both measured — the same session and
 * turn, so the same prompt — and each side's p50 and p99 over those is averaged over the seeds as in over_seeds:
 * `paired_over_seeds.ratios.<other>.<metric>[users]`, baseline ÷ symphony; `common_share`, the smallest share of
 * either run's requests the pair had in common. `never_behind_paired`: every ratio at least 1.
 */
export function pairedOverSeeds(curves: Curves<SymphonyRunFigures>, others: readonly string[], o: SymphonySetup): PairedOverSeeds {
  if (!others.every((b) => curves[`${b}-aa`]) || !curves['symphony-aa']) return {};
  const extra = extraSeeds(curves, others, o);
  const suffixes = ['', '-aa', ...extra.map((k) => `-seed${k}`)];
  const failing: string[] = [];
  const ratios: SeedRatios = {};
  const commonShare: Record<string, Record<number, number | null>> = {};
  for (const b of others) {
    ratios[b] = {};
    commonShare[b] = {};
    const pairs = (u: number) =>
      suffixes.map((x) => {
        const [sym, other] = [curves[`symphony${x}`]?.[u]?.ttft_by_request, curves[`${b}${x}`]?.[u]?.ttft_by_request];
        if (!sym || !other) return null;
        const ids = Object.keys(sym).filter((id) => id in other);
        const share = Math.min(ids.length / Object.keys(sym).length, ids.length / Object.keys(other).length);
        return { sym: ids.map((id) => sym[id]), other: ids.map((id) => other[id]), share };
      });
    for (const u of o.users) {
      const ps = pairs(u);
      commonShare[b][u] = ps.every((p) => p) ? round(Math.min(...ps.map((p) => p!.share)), 3) : null;
    }
    for (const [m, q] of [
      ['ttft_p50', 50],
      ['ttft_p99', 99],
    ] as const) {
      ratios[b][m] = Object.fromEntries(
        o.users.map((u) => {
          const ps = pairs(u);
          if (!ps.every((p) => p && p.sym.length > 0)) {
            failing.push(`${b} @ ${u}: ${m} not run on every seed`);
            return [u, null];
          }
          // Never null: both sides hold the pair's common requests, and there are some.
          const mean = (side: 'sym' | 'other') => ps.reduce((a, p) => a + (percentile(p![side], q) ?? 0), 0) / ps.length;
          const r = round(mean('other') / mean('sym'), 3);
          if (r === null || r < 1) failing.push(`${b} @ ${u}: ${m} ${r} < 1`);
          return [u, r];
        }),
      );
    }
  }
  return {
    paired_over_seeds: { seeds: [o.seed, o.aaSeed, ...extra], common_share: commonShare, ratios },
    never_behind_paired: { value: failing.length === 0, failing },
  };
}
