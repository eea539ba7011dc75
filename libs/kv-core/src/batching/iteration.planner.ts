import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import type { IterationInput, IterationPlan, SeqState } from './seq-state.js';

/** Priority descending, then arrival ascending, then id: a total order, so plans are deterministic. */
export function compareSeqs(a: SeqState, b: SeqState): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.arrivalSeq !== b.arrivalSeq) return a.arrivalSeq - b.arrivalSeq;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * One continuous-batching iteration (Orca-style):
 *  1. decode every running sequence, best first, up to `maxBatch`;
 *  2. when memory is planned (`kvAvailable`) and a pool cannot give the decoding sequences
 *     their next blocks, preempt running sequences of that pool worst first (lowest priority,
 *     latest arrival: vLLM's recompute preemption) until the rest fit — a full pool slows the
 *     batch down instead of failing it;
 *  3. fill the remaining batch slots with waiting sequences in (priority desc, arrival asc)
 *     order while their prompts fit the remaining `maxPrefillTokens` budget and their blocks
 *     fit what is left of their pool.
 *
 * Admission stops at the first waiting sequence that does not fit instead of skipping it:
 * letting smaller, later prompts overtake would starve long prompts forever.
 * When nothing was admitted yet, the head of the queue is admitted even when its prompt exceeds
 * the token budget, alone, while the running sequences decode — otherwise a prompt longer than
 * the budget would wait for the whole batch to finish, and every request behind it with it (the
 * live multiround's p99 was that wait) — but never beyond its pool's blocks (the node refuses
 * requests that could not fit an empty pool). Its pass delays the batch's next decode step, as a
 * prefill-first scheduler without chunked prefill does. An iteration that preempts admits nothing (as vLLM does): the preempted, which
 * keep their place in the queue, come back before anything that arrived after them.
 * With `holdLongPrompts`, a prompt that computes more than a chunk and more than what the pass
 * admitted so far is passed over for this pass (not a stop: the shorter ones behind it still go),
 * and leads the next one. A prompt of a chunk or less always joins: splitting off so little
 * compute costs the others an extra pass (and the batch a decode step) for about what it saves.
 */
export function planIteration(input: IterationInput): IterationPlan {
  const { maxBatch, maxPrefillTokens, kvAvailable } = input;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, got ${maxBatch}`);
  if (!Number.isInteger(maxPrefillTokens) || maxPrefillTokens < 0) {
    throw new RangeError(`maxPrefillTokens must be a non-negative integer, got ${maxPrefillTokens}`);
  }

  const running = [...input.running].sort(compareSeqs);
  let decode = running.slice(0, maxBatch);
  const preempt: string[] = [];
  const left = kvAvailable ? { ...kvAvailable } : undefined;
  if (left) {
    const need = new Map<string, number>();
    for (const s of decode) need.set(poolOf(s), (need.get(poolOf(s)) ?? 0) + blocksOf(s));
    const dropped = new Set<string>();
    for (const victim of [...running].reverse()) {
      const pool = poolOf(victim);
      const short = (need.get(pool) ?? 0) - (left[pool] ?? 0);
      if (short <= 0) continue;
      dropped.add(victim.id);
      preempt.push(victim.id);
      left[pool] = (left[pool] ?? 0) + Math.max(0, victim.freeable ?? 0);
      if (decode.includes(victim)) need.set(pool, need.get(pool)! - blocksOf(victim));
    }
    decode = decode.filter((s) => !dropped.has(s.id));
    for (const [pool, n] of need) left[pool] = (left[pool] ?? 0) - n;
  }

  const prefill: string[] = [];
  let budget = maxPrefillTokens;
  let admittedTokens = 0;
  for (const seq of preempt.length > 0 ? [] : [...input.waiting].sort(compareSeqs)) {
    if (decode.length + prefill.length >= maxBatch) break;
    const first = prefill.length === 0;
    if (input.holdLongPrompts && !first && seq.promptTokens > Math.max(admittedTokens, CHUNK_TOKENS)) continue;
    if (seq.promptTokens > budget && !first) break;
    if (left && blocksOf(seq) > (left[poolOf(seq)] ?? 0)) break;
    prefill.push(seq.id);
    budget = Math.max(0, budget - seq.promptTokens);
    admittedTokens += seq.promptTokens;
    if (left) left[poolOf(seq)] = (left[poolOf(seq)] ?? 0) - blocksOf(seq);
  }
  return { prefill, decode: decode.map((s) => s.id), preempt };
}

const poolOf = (s: SeqState): string => s.pool ?? '';
const blocksOf = (s: SeqState): number => Math.max(0, s.blocks ?? 0);
