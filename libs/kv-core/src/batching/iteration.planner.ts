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
 *  2. fill the remaining batch slots with waiting sequences in (priority desc, arrival asc)
 *     order while their prompts fit the remaining `maxPrefillTokens` budget.
 *
 * Admission stops at the first waiting sequence that does not fit instead of skipping it:
 * letting smaller, later prompts overtake would starve long prompts forever.
 * If nothing decodes and nothing was admitted, the head of the queue is admitted even when
 * its prompt exceeds the budget — otherwise a prompt longer than the budget would never run.
 * (Chunked prefill, if the engine has it, splits that prompt; this policy only picks.)
 */
export function planIteration(input: IterationInput): IterationPlan {
  const { maxBatch, maxPrefillTokens } = input;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, got ${maxBatch}`);
  if (!Number.isInteger(maxPrefillTokens) || maxPrefillTokens < 0) {
    throw new RangeError(`maxPrefillTokens must be a non-negative integer, got ${maxPrefillTokens}`);
  }

  const decode = [...input.running].sort(compareSeqs).slice(0, maxBatch).map((s) => s.id);
  const prefill: string[] = [];
  let budget = maxPrefillTokens;
  for (const seq of [...input.waiting].sort(compareSeqs)) {
    if (decode.length + prefill.length >= maxBatch) break;
    const starving = decode.length === 0 && prefill.length === 0;
    if (seq.promptTokens > budget && !starving) break;
    prefill.push(seq.id);
    budget = Math.max(0, budget - seq.promptTokens);
  }
  return { prefill, decode };
}
