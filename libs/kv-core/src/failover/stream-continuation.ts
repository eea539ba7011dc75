/**
 * Failover that continues a stream token-exactly. A request whose node went down is sent to
 * another node with the prompt it had plus the completion tokens already streamed as its prompt;
 * the KV of that prefix comes from whatever tier or peer still holds it and the rest is
 * recomputed. The sampler does not start over: it is seeded from the original prompt and skips
 * one draw per streamed token (`drawOffset`), so the continuation samples exactly the tokens the
 * first attempt would have, greedy or seeded. Every engine draws once per sampled token, which is
 * what makes the streamed count the draw offset.
 */

/** What a request has streamed when its node goes down. */
export interface StreamSoFar {
  /** The prompt the client's request became (template applied), before any continuation. */
  readonly prompt: readonly number[];
  /** Completion tokens already handed to the client, over every attempt, in order. */
  readonly streamed: readonly number[];
  /** The request's completion budget (the original max_tokens, > 0). */
  readonly maxTokens: number;
  /** Continuations made so far for this request. */
  readonly failovers: number;
}

export type ContinuationPlan =
  /** Dispatch this: `tokens` as the prompt, the sampler `drawOffset` draws in, `maxTokens` left. */
  | { readonly kind: 'continue'; readonly tokens: readonly number[]; readonly drawOffset: number; readonly maxTokens: number }
  /** The whole budget was streamed (only the final event was lost): the request ends with `length`. */
  | { readonly kind: 'complete' }
  /** The request moved `maxFailovers` times already: it fails with a clear error. */
  | { readonly kind: 'exhausted'; readonly failovers: number };

/** The next step for a request whose node went down; `maxFailovers` ≥ 0 continuations are allowed per request. */
export function planContinuation(s: StreamSoFar, maxFailovers: number): ContinuationPlan {
  if (!(Number.isInteger(maxFailovers) && maxFailovers >= 0))
    throw new RangeError(`maxFailovers must be an integer >= 0, got ${maxFailovers}`);
  if (!(Number.isInteger(s.maxTokens) && s.maxTokens > 0)) throw new RangeError(`maxTokens must be a positive integer, got ${s.maxTokens}`);
  if (s.prompt.length === 0) throw new RangeError('a continued request needs its prompt');
  if (s.streamed.length > s.maxTokens) throw new RangeError(`streamed ${s.streamed.length} tokens of a budget of ${s.maxTokens}`);
  if (s.streamed.length === s.maxTokens) return { kind: 'complete' };
  if (s.failovers >= maxFailovers) return { kind: 'exhausted', failovers: s.failovers };
  return {
    kind: 'continue',
    tokens: [...s.prompt, ...s.streamed],
    drawOffset: s.streamed.length,
    maxTokens: s.maxTokens - s.streamed.length,
  };
}

/**
 * Length of the prompt a sampler is seeded from: the request's prompt without the `drawOffset`
 * completion tokens a continuation carries. Null when the offset is not a count of tokens the
 * prompt holds (at least one prompt token must stay: a request without a prompt never sampled).
 */
export function seedPromptLength(promptTokens: number, drawOffset: number): number | null {
  if (!Number.isInteger(drawOffset) || drawOffset < 0 || drawOffset >= promptTokens) return null;
  return promptTokens - drawOffset;
}

/** Usage as one node reports it for its attempt. */
export interface AttemptUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens: number;
}

/**
 * The client's usage for a continued attempt's report: the original prompt, every completion
 * token of every attempt, and cached tokens of the original prompt only (the continuation's
 * cache hits on its streamed tokens are no prompt tokens of the client's). `firstCached`: what
 * the first attempt reported, when it did.
 */
export function continuedUsage(originalPrompt: number, streamedBefore: number, reported: AttemptUsage, firstCached?: number): AttemptUsage {
  return {
    promptTokens: originalPrompt,
    completionTokens: streamedBefore + reported.completionTokens,
    cachedTokens: firstCached ?? Math.min(reported.cachedTokens, originalPrompt),
  };
}
