// The plan's whole-cluster verification, apart from the twin. A cell (plan.policy.ts) sees too few
// of the workload's rare very long sessions to set the P99, so the cell's answer is only an
// estimate: it is run whole, and stepped up on whole runs until it meets the SLO or cannot.
import { percentile } from '@mnemo/kv-core';
import { rooflineCompute } from '../../costs/roofline.compute.js';
import type { GpuHardware } from '../../scenario/gpu-cluster.scenario.js';
import type { TwinSession, TwinTurn } from '../../workload/session.workload.js';
import type { Evaluation, InstanceBounds, RunFigures } from './plan.search.js';

/** One whole-cluster run as the results file lists it. */
export type WholeRun = RunFigures & { readonly instances: number; readonly meets: boolean };

export interface Verification {
  /** Fewest instances the whole cluster meets the SLO at (null: cannot meet). */
  readonly instances: number | null;
  readonly reason: string | null;
  readonly runs: readonly WholeRun[];
}

/**
 * Fewest instances, from the cell's answer `start`, at which `run(n)` (a whole-cluster run) meets.
 * Doubling from `start` until one meets, then bisecting between the last miss and the first meet.
 * Stops with a reason instead where doubling cuts whole-cluster P99 TTFT by less than `floorGain` while TPOT is met (the rule
 * the cell search applies), or at `max`.
 */
export function verifyWhole(run: (instances: number) => Evaluation, { start, max, floorGain }: InstanceBounds): Verification {
  const runs: WholeRun[] = [];
  const seen = new Map<number, Evaluation>();
  const at = (n: number): Evaluation => {
    let r = seen.get(n);
    if (!r) {
      r = run(n);
      seen.set(n, r);
      runs.push({ instances: n, ...r.summary, meets: r.meets });
    }
    return r;
  };
  let prev = { n: start, r: at(start) };
  if (prev.r.meets) return { instances: start, reason: null, runs };
  // A policy is declared unable to meet the SLO only from whole-cluster runs, never from a computed floor.
  let hi: number | null = null;
  while (hi === null) {
    if (prev.n >= max)
      return { instances: null, reason: `misses the SLO on the whole cluster at ${max} instances, the search's bound`, runs };
    const n = Math.min(max, prev.n * 2);
    const r = at(n);
    if (r.meets) hi = n;
    else if (r.tpotOk && r.p99 !== null && prev.r.p99 !== null && r.p99 > prev.r.p99 * (1 - floorGain))
      return {
        instances: null,
        reason:
          `whole cluster: P99 TTFT ${r.p99} ms at ${n} instances, ${prev.r.p99} ms at ${prev.n}: ` +
          "the SLO is under this policy's floor at this load",
        runs,
      };
    else prev = { n, r };
  }
  let lo = prev.n;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (at(mid).meets) hi = mid;
    else lo = mid;
  }
  return { instances: hi, reason: null, runs };
}

/** What the floor reads of a session: its prompts' lengths and replies. */
export type FloorSession = Pick<TwinSession, 'system' | 'doc'> & { readonly turns: readonly Pick<TwinTurn, 'user' | 'reply'>[] };

/**
 * A lower bound on P99 TTFT at any number of instances: each request's prefill of the tokens no
 * cache can hold — the first turn's document and message (the system prompt is shared), a later
 * turn's new message and paste, every earlier turn taken as cached — on an idle GPU of `hw`, then
 * that time's `p` quantile over the workload's requests (each request's TTFT is at least its own,
 * so the quantile of TTFTs is at least theirs). Turns the client would not send (past
 * `maxContext`) are left out, as closed-loop.users.ts leaves them.
 */
export function ttftFloorMs(
  sessions: readonly FloorSession[],
  hw: Pick<GpuHardware, 'gpu' | 'model' | 'efficiency' | 'maxContext'>,
  { p = 0.99, maxContext = hw.maxContext }: { readonly p?: number; readonly maxContext?: number } = {},
): number {
  const c = rooflineCompute(hw.gpu, hw.model, hw.efficiency);
  const times: number[] = [];
  for (const s of sessions) {
    let history = s.system.length + s.doc.length;
    for (let t = 0; t < s.turns.length; t++) {
      const turn = s.turns[t];
      const prompt = history + turn.user.length;
      if (prompt + turn.reply >= maxContext) break;
      const fresh = t === 0 ? prompt - s.system.length : turn.user.length;
      const before = prompt - fresh;
      times.push(c.prefillMs(1, fresh, fresh * before + (fresh * (fresh + 1)) / 2));
      history = prompt + turn.reply;
    }
  }
  // The nearest-rank quantile (kv-core percentile, `p` a fraction here); no request at all bounds nothing.
  return Math.round((percentile(times, p * 100) ?? 0) * 10) / 10;
}
