// ShareGPT-like sessions at the papers' own scale (no trace can be downloaded here: the
// generator is fitted to published statistics, printed beside them). The shapes come from the
// multi-round benchmark's generator (libs/testkit/src/workloads/multiround.workload.ts: turns, the
// session-length tail, pastes) at full size; reply lengths and typing speed are set to the papers'
// figures. The generator itself is testkit's, which the twin may not import: these are its
// options over its defaults, and what is done with the sessions it draws (libs/testkit/src/workloads/paper.workload.ts
// composes the two).
import type { TwinSession } from '../../workload/session.workload.js';

/** A log-normal length: median and σ, clamped to [min, max] (tokens). */
export interface LengthDistribution {
  readonly median: number;
  readonly sigma: number;
  readonly min: number;
  readonly max: number;
}

/** The generator's options this module sets or reads (testkit's `WorkloadOptions` has them all). */
export interface PaperWorkloadOptions {
  readonly sessions: number;
  readonly systemTokens: number;
  readonly lengthScale: number;
  readonly maxSessionTokens: number;
  readonly user: LengthDistribution;
  readonly reply: LengthDistribution;
  readonly typeTokensPerS: number;
  readonly thinkCompression: number;
  readonly dilation: number;
}

/**
 * Published statistics the generator is fitted to:
 * - Symphony §2.2 (Fig. 3): 73.4% of ShareGPT conversations are multi-turn; FastSwitch §2.2: 78%, mean 5.5 turns;
 * - SwiftCache Fig. 3b: 10% of sessions over 13K tokens, 1% over 56K;
 * - vLLM (SOSP '23) §6.1: ShareGPT outputs average 338 tokens (inputs 161, pastes included);
 * - Symphony §1: an advisory (typing starts) precedes its request by 11.3 s on average.
 */
export const PAPER_STATS = {
  multiTurnShare: [0.734, 0.78],
  meanTurns: 5.5,
  tail: [
    { tokens: 13_000, share: 0.1 },
    { tokens: 56_000, share: 0.01 },
  ],
  meanReplyTokens: 338,
  meanTypingLeadS: 11.3,
} as const;

/**
 * Full-size sessions: no length scaling, human reading speed, replies log-normal with a mean of
 * 338 tokens (median 250, σ 0.78), typing speed chosen so the mean typing time is 11.3 s
 * (typed turns' mean is 60 tokens: 60 / 11.3 s ≈ 5.2 tokens/s), sessions capped at 60K tokens
 * (under Llama-3.1-8B's 64K context the twin serves). `thinkCompression` shortens reading and
 * typing alike (1: human speeds).
 */
export const PAPER_WORKLOAD_FIT = {
  sessions: 1000,
  lengthScale: 1,
  maxSessionTokens: 60_000,
  reply: { median: 250, sigma: 0.78, min: 8, max: 2048 },
  typeTokensPerS: 5.2,
  thinkCompression: 1,
  dilation: 1,
} as const satisfies Partial<PaperWorkloadOptions>;

/**
 * FastSwitch's workload (§4): Multi-Round ShareGPT at its original lengths, no session-length tail
 * fit (that tail is SwiftCache's trace, not this one): turns as above (mean 5.5, FastSwitch §2.2),
 * user inputs log-normal with ShareGPT's mean of 161 tokens (vLLM, SOSP '23, §6.1; median 100,
 * σ 0.98: mean = 100 · e^{σ²/2}), replies with its mean of 338, human reading and typing.
 * `maxSessionTokens: 0` turns the pasted-material fit off: a session is its turns.
 */
export const FASTSWITCH_WORKLOAD_FIT = {
  maxSessionTokens: 0,
  user: { median: 100, sigma: 0.98, min: 4, max: 2048 },
} as const satisfies Partial<PaperWorkloadOptions>;

/** The papers' workload: the generator's `defaults` with {@link PAPER_WORKLOAD_FIT} over them. */
export function paperWorkload<W extends PaperWorkloadOptions>(defaults: W): W {
  return { ...defaults, ...PAPER_WORKLOAD_FIT };
}

/** FastSwitch's workload: the papers' with {@link FASTSWITCH_WORKLOAD_FIT} over it. */
export function fastswitchWorkload<W extends PaperWorkloadOptions>(defaults: W): W {
  return { ...paperWorkload(defaults), ...FASTSWITCH_WORKLOAD_FIT };
}

/** A token stream unique to `salt`: sessions re-drawn from the same shape share no KV. */
function fresh(n: number, salt: number): number[] {
  const out = new Array<number>(n);
  let x = (salt * 2654435761) >>> 0;
  for (let i = 0; i < n; i++) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    out[i] = 1 + (x % 32_000);
  }
  return out;
}

/**
 * A lazy list of `count` sessions cycling through `base` (the papers' "1,000 samples"), each with
 * its own tokens (the system prompt of `systemTokens` shared), built when a user takes it: a list
 * of thousands of sessions costs nothing until read.
 */
export function cycleSessions(base: readonly TwinSession[], count: number, systemTokens: number): readonly TwinSession[] {
  const system = fresh(systemTokens, 1);
  const make = (k: number): TwinSession => {
    const b = base[k % base.length];
    return {
      id: `u${k}`,
      system,
      doc: fresh(b.doc.length, 1_000_003 + 2 * k),
      turns: b.turns.map((t, i) => ({ ...t, user: fresh(t.user.length, (k + 1) * 1_000_033 + i) })),
    };
  };
  return new Proxy<TwinSession[]>([], {
    get(target, prop) {
      if (prop === 'length') return count;
      if (typeof prop === 'string' && /^\d+$/.test(prop)) return Number(prop) < count ? make(Number(prop)) : undefined;
      return Reflect.get(target, prop);
    },
  });
}

/** The generated workload's statistics beside the papers'. */
export interface PaperWorkloadStats {
  readonly sessions: number;
  readonly multi_turn_share: { readonly generated: number; readonly papers: readonly number[] };
  readonly mean_turns: { readonly generated: number; readonly papers: number };
  readonly session_tail: ReadonlyArray<{ tokens: number; paper_share_over: number; generated_share_over: number }>;
  readonly mean_reply_tokens: { readonly generated: number; readonly paper: number };
  readonly mean_typing_lead_s: { readonly generated: number; readonly paper: number };
  readonly mean_reading_s: number;
  readonly think_compression: number;
  /** The generator's session-length fit (testkit's `fitTail()`). */
  readonly fit: { readonly median: number; readonly sigma: number };
  readonly source: string;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
/** A session's length at its end: system prompt, document, every user turn and reply. */
const sessionTokens = (x: TwinSession): number => x.system.length + x.doc.length + x.turns.reduce((a, t) => a + t.user.length + t.reply, 0);

/** The statistics of `base`, drawn with `o`, whose generator fitted its session lengths to `fit`. */
export function paperWorkloadStats(
  base: readonly TwinSession[],
  o: Pick<PaperWorkloadOptions, 'thinkCompression'>,
  fit: { readonly median: number; readonly sigma: number },
): PaperWorkloadStats {
  const lengths = base.map(sessionTokens);
  const turns = base.map((s) => s.turns.length);
  const replies = base.flatMap((s) => s.turns.map((t) => t.reply));
  const typing = base.flatMap((s) => s.turns.slice(1).map((t) => t.typeMs / 1000));
  const reading = base.flatMap((s) => s.turns.map((t) => t.readMs / 1000));
  const over = (n: number): number => lengths.filter((l) => l > n).length / lengths.length;
  return {
    sessions: base.length,
    multi_turn_share: { generated: mean(turns.map((t) => (t > 1 ? 1 : 0))), papers: PAPER_STATS.multiTurnShare },
    mean_turns: { generated: mean(turns), papers: PAPER_STATS.meanTurns },
    session_tail: PAPER_STATS.tail.map((p) => ({ tokens: p.tokens, paper_share_over: p.share, generated_share_over: over(p.tokens) })),
    mean_reply_tokens: { generated: mean(replies), paper: PAPER_STATS.meanReplyTokens },
    mean_typing_lead_s: { generated: mean(typing), paper: PAPER_STATS.meanTypingLeadS },
    mean_reading_s: mean(reading),
    think_compression: o.thinkCompression,
    fit,
    source: 'no ShareGPT trace can be downloaded here: sessions are drawn by a seeded generator fitted to the statistics above',
  };
}
