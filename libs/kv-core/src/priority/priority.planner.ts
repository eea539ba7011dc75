import type { IterationInput, IterationPlan, SeqState } from '../batching/seq-state.js';

/**
 * One iteration of preemptive priority scheduling (FastSwitch §3): the batch is the
 * highest-ranked sequences that fit, running or waiting alike; running sequences left out
 * are preempted (swapped out), waiting ones that win are admitted (prefilled or swapped in).
 * `priority` is the effective rank (see FairPriorityRanker); on a tie a running sequence
 * stays ahead of a waiting one (no churn for nothing), then arrival order.
 *
 * Memory: each pool's budget is what it has available plus what preempting every running
 * sequence would free; a kept running sequence spends its `freeable` blocks plus its next
 * decode's, an admitted one its admission blocks. Running sequences past `maxBatch` stay
 * resident without decoding while their blocks fit. Waiting sequences of a pool are admitted
 * in rank order and stop at the first that does not fit (no overtaking: ranks, which age,
 * decide who goes first, not sizes). With nothing else running, the head is admitted even
 * over the prefill token budget, as in planIteration.
 */
export function planPriorityIteration(input: IterationInput & { kvAvailable: Readonly<Record<string, number>> }): IterationPlan {
  const { maxBatch, maxPrefillTokens, kvAvailable } = input;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, got ${maxBatch}`);
  if (!Number.isInteger(maxPrefillTokens) || maxPrefillTokens < 0)
    throw new RangeError(`maxPrefillTokens must be a non-negative integer, got ${maxPrefillTokens}`);
  const budget: Record<string, number> = { ...kvAvailable };
  for (const r of input.running) budget[poolOf(r)] = (budget[poolOf(r)] ?? 0) + freeableOf(r);

  const running = new Set(input.running.map((s) => s.id));
  const order = [...input.running, ...input.waiting].sort((a, b) => {
    if (a.priority !== b.priority) return b.priority - a.priority;
    const ra = running.has(a.id) ? 0 : 1;
    const rb = running.has(b.id) ? 0 : 1;
    if (ra !== rb) return ra - rb;
    if (a.arrivalSeq !== b.arrivalSeq) return a.arrivalSeq - b.arrivalSeq;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });

  const decode: string[] = [];
  const prefill: string[] = [];
  const kept = new Set<string>();
  const blocked = new Set<string>();
  let tokens = maxPrefillTokens;
  for (const s of order) {
    const pool = poolOf(s);
    const full = decode.length + prefill.length >= maxBatch;
    if (running.has(s.id)) {
      const cost = freeableOf(s) + (full ? 0 : blocksOf(s));
      if (cost > (budget[pool] ?? 0)) continue;
      budget[pool] = (budget[pool] ?? 0) - cost;
      kept.add(s.id);
      if (!full) decode.push(s.id);
      continue;
    }
    if (full || blocked.has(pool)) continue;
    const idle = decode.length === 0 && prefill.length === 0;
    if ((s.promptTokens > tokens && !idle) || blocksOf(s) > (budget[pool] ?? 0)) {
      blocked.add(pool);
      continue;
    }
    prefill.push(s.id);
    tokens = Math.max(0, tokens - s.promptTokens);
    budget[pool] = (budget[pool] ?? 0) - blocksOf(s);
  }
  const preempt = order
    .filter((s) => running.has(s.id) && !kept.has(s.id))
    .reverse()
    .map((s) => s.id);
  return { prefill, decode, preempt };
}

const poolOf = (s: SeqState): string => s.pool ?? '';
const blocksOf = (s: SeqState): number => Math.max(0, s.blocks ?? 0);
const freeableOf = (s: SeqState): number => Math.max(0, s.freeable ?? 0);
