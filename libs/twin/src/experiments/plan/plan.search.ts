// The capacity plan's search, apart from the twin: given `evaluate(candidate)`, the cheapest
// (instances, host GB per node, SSD TB per node) meeting the SLO, by a bounded search. Assumes
// what capacity planning assumes: more instances or more memory never make the SLO harder to meet
// (each run is one seeded sample, so near the boundary this holds only up to noise).
import { hourlyCost, nodesFor, roundUsd, type MemoryPoint } from './plan.cost.js';

/** What the search reads of a run's summary; the rest of it is recorded with the point tried, unread. */
export interface RunFigures {
  readonly ttft_p99_ms?: number | null;
  readonly tpot_mean_ms?: number | null;
  readonly requests?: number;
  readonly pool_evictions?: number;
}

/** One candidate judged: whether it meets the SLO, and what the floor rule reads. */
export interface Evaluation<S extends RunFigures = RunFigures> {
  readonly meets: boolean;
  readonly p99: number | null;
  readonly tpotOk: boolean;
  readonly summary: S;
  /** Answered from a run of a candidate the policy cannot tell apart from this one. */
  readonly reused?: boolean;
}

export interface Candidate extends MemoryPoint {
  readonly instances: number;
}

/** A point the search tried: run, or settled without a run by one that decides it. */
export interface Tried extends RunFigures {
  readonly instances: number;
  readonly nodes: number;
  readonly host_gb: number;
  readonly ssd_tb: number;
  readonly meets: boolean;
  readonly ran: boolean;
  readonly reused?: boolean;
  readonly settled_by?: { readonly instances: number; readonly host_gb: number; readonly ssd_tb: number };
  readonly cost_usd_per_hour: number;
}

/** A plan's answer: the cheapest configuration meeting the SLO and the run that showed it. */
export interface PlanBest {
  readonly instances: number;
  readonly host_gb: number;
  readonly ssd_tb: number;
  readonly cost_usd_per_hour: number;
  readonly nodes?: number;
  readonly ttft_p99_ms?: number | null;
  readonly tpot_mean_ms?: number | null;
  readonly requests?: number;
}

export interface PolicySearch {
  readonly best: PlanBest | null;
  readonly reason: string | null;
  readonly tried: readonly Tried[];
}

export interface InstanceBounds {
  readonly start: number;
  readonly max: number;
  readonly floorGain: number;
}

/**
 * Fewest instances in [1, max] at which `check(n)` meets, or null. Doubling from `start` until one
 * meets (or until doubling no longer cuts P99 TTFT by `floorGain`: the SLO is under what the
 * policy reaches at any size — a load-independent floor, e.g. recomputing the longest prompts),
 * then bisecting between the last miss and the first meet.
 */
export function fewestInstances(
  check: (n: number) => Evaluation,
  { start, max, floorGain }: InstanceBounds,
): { instances: number | null; reason: string | null } {
  let lo = 0;
  let hi: number | null = null;
  let n = Math.min(start, max);
  let prev: { n: number; p99: number | null } | null = null;
  while (hi === null) {
    const r = check(n);
    if (r.meets) hi = n;
    else {
      lo = n;
      if (n >= max) return { instances: null, reason: `misses the SLO at ${max} instances, the search's bound` };
      if (prev && r.p99 !== null && prev.p99 !== null && r.p99 > prev.p99 * (1 - floorGain) && r.tpotOk)
        return {
          instances: null,
          reason: `P99 TTFT ${r.p99} ms at ${n} instances, ${prev.p99} ms at ${prev.n}: the SLO is under this policy's floor at this load`,
        };
      prev = { n, p99: r.p99 };
      n = Math.min(max, n * 2);
    }
  }
  return { instances: bisect(check, lo, hi), reason: null };
}

/** Fewest instances in (lo, hi] that meet, given a miss at `lo` (0: none) and a meet at `hi`. */
export function bisect(check: (n: number) => { readonly meets: boolean }, lo: number, hi: number): number {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (check(mid).meets) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Largest instance count whose cost at `g` stays under `cost`, at most `max`. */
function instancesUnder(gpu: string, g: MemoryPoint, cost: number, max: number): number {
  let n = 0;
  while (n < max && hourlyCost({ gpu, instances: n + 1, ...g }) < cost) n++;
  return n;
}

const pick = (t: Tried | undefined) =>
  t ? { nodes: t.nodes, ttft_p99_ms: t.ttft_p99_ms, tpot_mean_ms: t.tpot_mean_ms, requests: t.requests } : {};

/**
 * One policy's plan. First the base memory point (Symphony's testbed: 256 GB DRAM and 4 TB SSD a
 * node) by `fewestInstances`; then each other point of the grid, cheapest memory first, by branch
 * and bound: only the largest instance count at which it would still be cheaper than the best so
 * far is run, and only a point that meets there is bisected further. Points the policy cannot
 * tell apart (InferCept uses no SSD) share their runs: `evaluate` is cached on what the policy uses.
 */
export function planPolicy({
  gpu,
  evaluate,
  grid,
  base,
  start,
  max,
  floorGain,
}: InstanceBounds & {
  readonly gpu: string;
  readonly evaluate: (c: Candidate) => Evaluation;
  readonly grid: readonly MemoryPoint[];
  readonly base: MemoryPoint;
}): PolicySearch {
  const tried: Tried[] = [];
  const seen = new Map<string, Evaluation>();
  const atLeast = (t: Tried, g: MemoryPoint) => t.host_gb >= g.hostGb && t.ssd_tb >= g.ssdTb;
  const atMost = (t: Tried, g: MemoryPoint) => t.host_gb <= g.hostGb && t.ssd_tb <= g.ssdTb;
  const check =
    (g: MemoryPoint) =>
    (n: number): Evaluation => {
      const key = `${n}|${g.hostGb}|${g.ssdTb}`;
      const known = seen.get(key);
      if (known) return known;
      // Settled without a run where a tried point decides it: one with no less memory and instances missed, or one with no more met.
      const missed = tried.find((t) => t.ran && !t.meets && t.instances >= n && atLeast(t, g));
      const met = tried.find((t) => t.ran && t.meets && t.instances <= n && atMost(t, g));
      // A run at the same size whose pools never evicted: larger pools would have held the same bytes at the same times.
      const roomy = tried.find((t) => t.ran && t.instances === n && t.pool_evictions === 0 && atMost(t, g));
      const by = missed ?? met ?? roomy;
      const r: Evaluation = by ? { meets: by.meets, p99: null, tpotOk: true, summary: {} } : evaluate({ instances: n, ...g });
      seen.set(key, r);
      const how = by
        ? { settled_by: { instances: by.instances, host_gb: by.host_gb, ssd_tb: by.ssd_tb } }
        : r.reused
          ? { reused: true }
          : {};
      tried.push({
        instances: n,
        nodes: nodesFor(n),
        host_gb: g.hostGb,
        ssd_tb: g.ssdTb,
        ...r.summary,
        meets: r.meets,
        ran: !by,
        ...how,
        cost_usd_per_hour: roundUsd(hourlyCost({ gpu, instances: n, ...g })),
      });
      return r;
    };
  /** Most instances a point with no less memory than `g` missed at: `g` misses there too. */
  const missedBelow = (g: MemoryPoint) => Math.max(0, ...tried.filter((t) => !t.meets && atLeast(t, g)).map((t) => t.instances));
  const first = fewestInstances(check(base), { start, max, floorGain });
  let best: Candidate | null = first.instances === null ? null : { ...base, instances: first.instances };
  const cost = (b: Candidate) => hourlyCost({ gpu, ...b });
  const largestTried = Math.max(...tried.map((t) => t.instances));
  const others = grid
    .filter((g) => g.hostGb !== base.hostGb || g.ssdTb !== base.ssdTb)
    .sort((a, b) => cost({ ...a, instances: 1 }) - cost({ ...b, instances: 1 }));
  for (const g of others) {
    const bound = best ? instancesUnder(gpu, g, cost(best), max) : largestTried;
    if (bound < 1 || !check(g)(bound).meets) continue;
    best = { ...g, instances: bisect(check(g), missedBelow(g), bound) };
  }
  // The run that showed the best point meets: its own, or the point with less memory that settled it.
  const meetsAt = (b: Candidate): Tried | undefined => {
    const t = tried.find((x) => x.instances === b.instances && x.host_gb === b.hostGb && x.ssd_tb === b.ssdTb && x.meets);
    if (!t || t.ran) return t;
    const s = t.settled_by;
    return tried.find((x) => x.ran && x.instances === s?.instances && x.host_gb === s.host_gb && x.ssd_tb === s.ssd_tb);
  };
  return {
    best: best
      ? {
          instances: best.instances,
          host_gb: best.hostGb,
          ssd_tb: best.ssdTb,
          cost_usd_per_hour: roundUsd(cost(best)),
          ...pick(meetsAt(best)),
        }
      : null,
    reason: best ? null : first.reason,
    tried,
  };
}
