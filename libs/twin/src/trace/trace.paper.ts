/**
 * What Mooncake FAST'25 publishes for its conversation trace, which a replay is checked against.
 * Fig. 5 (16 nodes, average TTFT read from the bars): global cache-aware 3.07 s, local cache-aware
 * 3.58 s, load-balancing 5.27 s, random 19.65 s (the text's "further 14%": 1 − 3.07/3.58). Fig. 10
 * (10 prefill nodes × 3M tokens of cache, outputs of 1): the global cache's hit rate 2.22× the local
 * one's and its average prefill GPU time 0.76×. Fig. 9: a 3M-token cache reaches under half the
 * maximum hit rate in most workloads; about 50M tokens nearly reaches it.
 */
export interface TracePaper {
  readonly name: string;
  /** Mean TTFT of local cache-aware scheduling, ms (Fig. 5): checked, and fitted to only on request. */
  readonly localTtftMs: number | null;
  readonly fig5: {
    readonly randomOverLocal: number | null;
    readonly leastLoadedOverLocal: number | null;
    readonly globalOverLocal: number | null;
  };
  readonly fig10: { readonly hitGlobalOverLocal: number | null; readonly prefillGlobalOverLocal: number | null };
}

const r2 = (x: number) => Math.round(x * 100) / 100;

export const MOONCAKE_CONVERSATION_PAPER: TracePaper = {
  name: "Mooncake FAST'25, conversation trace",
  localTtftMs: 3580,
  fig5: { randomOverLocal: r2(19.65 / 3.58), leastLoadedOverLocal: r2(5.27 / 3.58), globalOverLocal: r2(3.07 / 3.58) },
  fig10: { hitGlobalOverLocal: 2.22, prefillGlobalOverLocal: 0.76 },
};

/** A trace the command does not know: only the flags' figures. */
export function unknownPaper(localTtftMs: number | null): TracePaper {
  return {
    name: 'none (not a trace with published figures)',
    localTtftMs,
    fig5: { randomOverLocal: null, leastLoadedOverLocal: null, globalOverLocal: null },
    fig10: { hitGlobalOverLocal: null, prefillGlobalOverLocal: null },
  };
}

/** Fig. 9's capacities, tokens: 10⁴ … 10⁹ in half decades, with the paper's 3M and 50M points. */
export const FIG9_CAPACITIES = [1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 3e7, 5e7, 1e8, 3e8, 1e9];

export interface PaperCheck {
  readonly paper: number | null;
  readonly twin: number | null;
  /** (twin − paper) ÷ paper; null without both. */
  readonly error: number | null;
  /** |error| ≤ 0.25, the tolerance; null without both. */
  readonly within_25pct: boolean | null;
}

export function check(paper: number | null, twin: number | null): PaperCheck {
  const error = paper !== null && twin !== null && paper !== 0 ? Math.round(((twin - paper) / paper) * 1000) / 1000 : null;
  return { paper, twin, error, within_25pct: error === null ? null : Math.abs(error) <= 0.25 };
}
