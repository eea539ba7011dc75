// The multi-round benchmark's seeded ShareGPT-like sessions, with a session-length tail fitted
// to ShareGPT's (SwiftCache §2.2, Fig. 3b: 10 % of sessions exceed 13K tokens and 1 % exceed
// 56K), scaled down so the longest sessions fit this machine's sim nodes.
import { percentile } from '@mnemo/kv-core';
import { clamp, lognormal, rng } from '../figures.js';

export interface Tail {
  readonly tokens: number;
  readonly share: number;
}

/** ShareGPT's session-length tail: the share of sessions above each length (tokens, unscaled). */
export const SHAREGPT_TAIL: readonly Tail[] = [
  { tokens: 13_000, share: 0.1 },
  { tokens: 56_000, share: 0.01 },
];

/**
 * The standard normal quantile Φ⁻¹(p), p in (0, 1): Acklam's rational approximation (relative
 * error below 1.2e-9), enough for drawing lengths at chosen quantiles.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a: number[] = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b: number[] = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c: number[] = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783,
  ];
  const d: number[] = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo || p > 1 - lo) {
    const q = Math.sqrt(-2 * Math.log(p < lo ? p : 1 - p));
    const x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    return p < lo ? x : -x;
  }
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/**
 * The log-normal through both tail points: ln L ~ N(ln median, σ²) with P(L > 13K) = 10 % and
 * P(L > 56K) = 1 %, so σ = ln(56K / 13K) / (z₀.₉₉ − z₀.₉) and median = 13K · e^(−z₀.₉ σ).
 */
export function fitTail(tail: readonly Tail[] = SHAREGPT_TAIL): { median: number; sigma: number } {
  const [a, b] = tail as [Tail, Tail];
  const [za, zb] = [normalQuantile(1 - a.share), normalQuantile(1 - b.share)];
  const sigma = Math.log(b.tokens / a.tokens) / (zb - za);
  return { median: a.tokens * Math.exp(-za * sigma), sigma };
}

/** Token count of each piece of workload text; the ids themselves carry no meaning. */
export const text = (n: number, salt: number): number[] => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);

export interface WorkloadOptions {
  seed: number;
  sessions: number;
  systemTokens: number;
  lengthScale: number;
  maxSessionTokens: number;
  singleTurnShare: number;
  maxTurns: number;
  user: { median: number; sigma: number; min: number; max: number };
  reply: { median: number; sigma: number; min: number; max: number };
  readTokensPerS: number;
  typeTokensPerS: number;
  thinkCompression: number;
  dilation: number;
}
export const DEFAULT_WORKLOAD: WorkloadOptions = {
  seed: 20261123,
  sessions: 200,
  /** One system prompt every session starts with (a whole chunk every node soon holds). */
  systemTokens: 300,
  /**
   * Every ShareGPT length is divided by this: the tail points become 3,250 and 14,000 tokens.
   * Why 4: the sim nodes' context is 16,384 tokens, and a 56K-token session at full size would
   * need 16 times the device KV a node has here (2,048 blocks of 16 tokens).
   */
  lengthScale: 4,
  /** Longest session (system prompt included), under the sim nodes' context with room for a reply. */
  maxSessionTokens: 15_000,
  /** Turns: 25 % single-turn, the rest 2 + geometric (mean 5, capped at 20): mean ≈ 5.5 (ShareGPT). */
  singleTurnShare: 0.25,
  maxTurns: 20,
  /** User turns: 90 % under 132 tokens (SwiftCache Fig. 3a); replies ≈ 60 tokens. */
  user: { median: 40, sigma: 0.9, min: 4, max: 400 },
  reply: { median: 60, sigma: 0.5, min: 8, max: 200 },
  /** Humans: reading ≈ 250 words/min ≈ 5.5 tokens/s, typing ≈ 40 words/min ≈ 0.9 tokens/s. */
  readTokensPerS: 5.5,
  typeTokensPerS: 0.9,
  /** Think time is compressed this much (more load per user; nothing else changes) and dilated like compute. */
  thinkCompression: 60,
  dilation: 2,
};

export interface Turn {
  user: number[];
  typed: number;
  pasted: number;
  reply: number;
  readMs: number;
  typeMs: number;
  r: number;
}
export interface Session {
  id: string;
  system: number[];
  doc: number[];
  turns: Turn[];
}
/**
 * Seeded sessions. Each draws its turns and their user and reply lengths from the per-turn
 * statistics, and a target length from the fitted tail (scaled). Where the target exceeds what the
 * turns add up to, the rest is pasted material (a document, code) spread over the session's
 * turns by random shares — the first turn's paste is its document — so a long session grows
 * turn by turn as ShareGPT's do, not only by one huge first prompt. Sessions shorter than their
 * target are left as their turns make them: the body of the distribution comes from the
 * per-turn statistics, the tail from the fit.
 */
export function workload(o: WorkloadOptions = DEFAULT_WORKLOAD): Session[] {
  const r = rng(o.seed);
  const fit = fitTail();
  const system = text(o.systemTokens, 1);
  const thinkMs = (tokens: number, perS: number): number => Math.round(((tokens / perS) * 1000 * o.dilation) / o.thinkCompression);
  // Turns and target lengths at stratified quantiles, each in its own seeded order: a few hundred
  // sessions then have the stated shares (1 % over the far tail point is two of 200 sessions)
  // rather than whatever one small sample gives.
  const turnQ = strata(o.sessions, r);
  const lengthQ = strata(o.sessions, r);
  return Array.from({ length: o.sessions }, (_, s): Session => {
    const q = turnQ[s]!;
    const turns =
      q < o.singleTurnShare
        ? 1
        : Math.min(o.maxTurns, 2 + Math.floor(Math.log(1 - (q - o.singleTurnShare) / (1 - o.singleTurnShare)) / Math.log(5 / 6)));
    const target = Math.min(o.maxSessionTokens, (fit.median / o.lengthScale) * Math.exp(fit.sigma * normalQuantile(lengthQ[s]!)));
    const users = Array.from({ length: turns }, () => clamp(lognormal(r, o.user.median, o.user.sigma), o.user.min, o.user.max));
    const replies = Array.from({ length: turns }, () => clamp(lognormal(r, o.reply.median, o.reply.sigma), o.reply.min, o.reply.max));
    const body = o.systemTokens + users.reduce((a, b) => a + b, 0) + replies.reduce((a, b) => a + b, 0);
    const weights = Array.from({ length: turns }, () => -Math.log(1 - r())); // Dirichlet(1, …, 1) shares
    const total = weights.reduce((a, b) => a + b, 0);
    const excess = Math.max(0, Math.round(target) - body);
    const pastes = weights.map((w) => Math.floor((excess * w) / total));
    return {
      id: `s${s}`,
      system,
      doc: text(pastes[0]!, 1000 + s),
      turns: users.map((user, t) => ({
        user: text(user + (t > 0 ? pastes[t]! : 0), s * 100 + t),
        typed: user,
        pasted: t > 0 ? pastes[t]! : 0,
        reply: replies[t]!,
        readMs: thinkMs(replies[t]!, o.readTokensPerS),
        // A paste is not typed: typing time counts the typed words only.
        typeMs: thinkMs(user, o.typeTokensPerS),
        r: r(),
      })),
    };
  });
}

/** The quantiles (i + ½) / n, i < n, in a seeded random order. */
function strata(n: number, r: () => number): number[] {
  const u = Array.from({ length: n }, (_, i) => (i + 0.5) / n);
  for (let i = u.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [u[i], u[j]] = [u[j]!, u[i]!];
  }
  return u;
}

/** A session's length at its end: system prompt, document, every user turn and reply. */
export const sessionTokens = (x: Session): number =>
  x.system.length + x.doc.length + x.turns.reduce((a, t) => a + t.user.length + t.reply, 0);

/** The generated workload's statistics beside ShareGPT's (scaled), for the results file. */
export function workloadStats(
  sessions: Session[],
  o: WorkloadOptions = DEFAULT_WORKLOAD,
): {
  sessions: number;
  mean_turns: number;
  multi_turn_share: number;
  typed_user_turn_p90_tokens: number | null;
  session_tokens: { p50: number | null; p90: number | null; p99: number | null; max: number; mean: number };
  tail: Array<{ sharegpt_tokens: number; scaled_tokens: number; sharegpt_share_over: number; share_over: number }>;
  fit: { median_tokens: number; sigma: number; scaled_median_tokens: number };
} {
  const lengths = sessions.map(sessionTokens);
  const turns = sessions.map((x) => x.turns.length);
  const typed = sessions.flatMap((x) => x.turns.map((t) => t.typed));
  const fit = fitTail();
  const over = (n: number): number => lengths.filter((l) => l > n).length / lengths.length;
  return {
    sessions: sessions.length,
    mean_turns: turns.reduce((a, b) => a + b, 0) / turns.length,
    multi_turn_share: turns.filter((t) => t > 1).length / turns.length,
    typed_user_turn_p90_tokens: percentile(typed, 90),
    session_tokens: {
      p50: percentile(lengths, 50),
      p90: percentile(lengths, 90),
      p99: percentile(lengths, 99),
      max: Math.max(...lengths),
      mean: lengths.reduce((a, b) => a + b, 0) / lengths.length,
    },
    tail: SHAREGPT_TAIL.map((p) => ({
      sharegpt_tokens: p.tokens,
      scaled_tokens: p.tokens / o.lengthScale,
      sharegpt_share_over: p.share,
      share_over: over(p.tokens / o.lengthScale),
    })),
    fit: { median_tokens: fit.median, sigma: fit.sigma, scaled_median_tokens: fit.median / o.lengthScale },
  };
}
