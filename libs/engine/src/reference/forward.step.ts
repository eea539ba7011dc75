/**
 * One forward step of the reference engine as the twin's compute port prices an engine call:
 * its batch shape and how long the computation took. A step whose every row is a single token
 * is a decode step; any longer row makes it a prefill (a resume's recompute included).
 */
export interface ForwardStep {
  readonly kind: 'prefill' | 'decode';
  /** Sequences in the step. */
  readonly seqs: number;
  /** Tokens computed, over every sequence. */
  readonly tokens: number;
  /** Prefill: each computed token's position (the context it attends over), summed; decode: 0. */
  readonly attendedTokens: number;
  /** Decode: each sequence's context after the step, summed; prefill: 0. */
  readonly contextTokens: number;
  /**
   * Wall time of the step less what it waited on layer hooks (a restore's load, a store), ms:
   * the compute the port models, with what it shared the machine with at the time.
   */
  readonly ms: number;
}

/** The shape of a step over rows of `rows[i]` new tokens appended to contexts of `before[i]` tokens. */
export function forwardStepShape(rows: readonly number[], before: readonly number[], ms: number): ForwardStep {
  let [tokens, attended, context] = [0, 0, 0];
  const decode = rows.every((n) => n === 1);
  for (let i = 0; i < rows.length; i++) {
    const n = rows[i]!;
    const b = before[i] ?? 0;
    tokens += n;
    if (decode) context += b + 1;
    // Row j of n sits at position b + j and attends over b + j tokens before it (the twin's feature).
    else attended += n * b + (n * (n - 1)) / 2;
  }
  return { kind: decode ? 'decode' : 'prefill', seqs: rows.length, tokens, attendedTokens: attended, contextTokens: context, ms };
}
