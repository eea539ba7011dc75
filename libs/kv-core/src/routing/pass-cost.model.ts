import { CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { solveLinear } from '../stats/linear.solve.js';
import type { MeasuredCosts } from './node-load.js';

/** One prefill pass a node ran: its wall time and where its prompts' KV came from, in tokens. */
export interface PrefillPass {
  readonly ms: number;
  readonly computedTokens: number;
  readonly hostTokens: number;
  readonly ssdTokens: number;
  readonly peerTokens: number;
  /** Attention work of its computed tokens, in chunk pairs (attentionChunkPairs summed over its prompts); absent: 0. */
  readonly attentionChunkPairs?: number;
}

export interface PassCostOptions {
  /** What the figures are pulled towards before there is evidence (a node's defaults), ms per chunk. */
  readonly prior: { readonly recompute: number; readonly host: number; readonly ssd: number; readonly peer: number };
  /** Weight of each past pass per new one: 0.97 forgets a pass's weight by half in about 23 passes. */
  readonly decay?: number;
  /** How many chunks' worth of evidence the prior counts as (ridge). */
  readonly priorChunks?: number;
  /**
   * A figure is reported once the (decayed) evidence behind it reaches this many chunks' worth: the
   * fit's information on the term (its sum of squared chunks), so one pass of four chunks counts as 16.
   */
  readonly minChunks?: number;
  /**
   * ...and once this many passes back the fit (default: its number of terms). One pass cannot tell
   * a pass's overhead from its per-chunk cost; a figure learnt from it is the prior's pull and that
   * pass's noise, and one early pass put a node at twice its real prefill cost.
   */
  readonly minPasses?: number;
  /** Reported figures stay within [prior ÷ bound, prior × bound]. */
  readonly bound?: number;
  /**
   * Attention per chunk pair ÷ recompute per chunk, where the node knows it from its model's shape
   * or its engine's cost model: the attention figure is then pulled towards this share of the
   * recompute figure (both scale with the same hardware) rather than towards 0, and is reported as
   * soon as recompute is. Absent: towards 0, until passes over long prompts raise it.
   */
  readonly attentionShare?: number;
}

const TERMS = 6; // pass overhead, recompute, host, ssd, peer, attention
/**
 * The attention term's ridge counts as priorChunks passes of this many chunk pairs (a 22-chunk,
 * 5.6K-token prompt from scratch): over short prompts a quadratic is all but a straight line, and
 * a weak ridge let it soak up the pull towards the recompute prior; only passes over long prompts,
 * where attention is what they measure, move it off 0.
 */
const ATTENTION_PRIOR_PAIRS = 256;

/**
 * A node's own costs per 256-token chunk, learnt from its prefill passes: each pass's wall time
 * is fitted as overhead + recompute·computed + host·restored-from-host + ssd·restored-from-SSD +
 * peer·pulled-from-peers (in chunks) + attention·chunk pairs (each computed chunk over the context
 * before it: a long prompt's quadratic term) by least squares with exponential forgetting, pulled towards
 * the prior while evidence is thin. Restores overlap compute layer by layer, so a restore term is
 * what a restored chunk adds to the pass — the marginal cost routing needs — not its raw read
 * time. Figures are bounded around the prior and reported only once enough chunks back them.
 */
export class PassCostModel {
  private readonly a: number[][] = Array.from({ length: TERMS }, () => new Array<number>(TERMS).fill(0));
  private readonly b = new Array<number>(TERMS).fill(0);
  private readonly o: Required<Omit<PassCostOptions, 'attentionShare'>>;
  private readonly share?: number;
  private passes = 0;

  constructor(options: PassCostOptions) {
    const { attentionShare, ...rest } = options;
    this.o = { decay: 0.97, priorChunks: 4, minChunks: 16, minPasses: TERMS, bound: 16, ...rest };
    if (attentionShare !== undefined) {
      if (!(attentionShare >= 0 && Number.isFinite(attentionShare))) throw new RangeError('PassCostModel: attentionShare must be ≥ 0');
      this.share = attentionShare;
    }
    const { decay, priorChunks, minChunks, minPasses, bound } = this.o;
    if (!(decay > 0 && decay <= 1) || !(priorChunks > 0) || !(minChunks >= 0) || !(minPasses >= 0) || !(bound >= 1))
      throw new RangeError('PassCostModel: decay in (0, 1], priorChunks > 0, minChunks ≥ 0, minPasses ≥ 0, bound ≥ 1');
    for (const v of Object.values(this.o.prior))
      if (!(v > 0 && Number.isFinite(v))) throw new RangeError('PassCostModel: priors must be > 0');
  }

  /** Passes observed so far. */
  get observed(): number {
    return this.passes;
  }

  /** Adds a pass; one with a non-finite or negative figure, or no tokens at all, is ignored. */
  observe(p: PrefillPass): void {
    const xs = [1, p.computedTokens, p.hostTokens, p.ssdTokens, p.peerTokens].map((t, i) => (i === 0 ? t : t / CHUNK_TOKENS));
    xs.push(p.attentionChunkPairs ?? 0);
    if (![p.ms, ...xs].every((v) => Number.isFinite(v) && v >= 0) || xs.slice(1).every((v) => v === 0)) return;
    for (let i = 0; i < TERMS; i++) {
      this.b[i] = this.o.decay * this.b[i]! + xs[i]! * p.ms;
      for (let j = 0; j < TERMS; j++) this.a[i]![j] = this.o.decay * this.a[i]![j]! + xs[i]! * xs[j]!;
    }
    this.passes++;
  }

  /** The figures measured well enough to report (absent: not yet), ms per chunk. */
  costs(): MeasuredCosts {
    const { prior, priorChunks, minChunks, minPasses, bound } = this.o;
    if (this.passes < minPasses) return {};
    // Attention's prior is 0 (a short-context node has none to speak of): only passes over long prompts raise it.
    const theta0 = [0, prior.recompute, prior.host, prior.ssd, prior.peer, 0];
    // Ridge towards the prior: (A + R) θ = b + R θ0. The overhead is pulled towards 0 as firmly: when
    // every pass is the same size, overhead and per-chunk cost cannot be told apart, and the chunks take the time.
    const ridge = (i: number) => (i === 5 ? priorChunks * ATTENTION_PRIOR_PAIRS ** 2 : priorChunks);
    const m = this.a.map((row, i) => row.map((v, j) => v + (i === j ? ridge(i) : 0)));
    const k = this.share;
    if (k !== undefined) {
      // The attention ridge on (θ_attention − k·θ_recompute) rather than on θ_attention alone: λ·v·vᵀ with v = e5 − k·e1.
      const lambda = ridge(5);
      m[1]![1]! += lambda * k * k;
      m[1]![5]! -= lambda * k;
      m[5]![1]! -= lambda * k;
    }
    const rhs = this.b.map((v, i) => v + (i === 0 ? 0 : priorChunks * theta0[i]!));
    const theta = solveLinear(m, rhs);
    const fig = (i: number): number | undefined => {
      // Evidence is counted in the term's own units: chunks, or for attention passes of ATTENTION_PRIOR_PAIRS pairs;
      // an attention figure tied to recompute's by a known share needs only recompute's.
      const evidence = i === 5 && k !== undefined ? this.a[1]![1]! : this.a[i]![i]!;
      if (!theta || evidence < minChunks * (i === 5 && k === undefined ? ATTENTION_PRIOR_PAIRS ** 2 : 1)) return undefined;
      const x = theta[i]!;
      // A chunk attending over one chunk of context costs about 43 ÷ d_model of computing a chunk
      // (4·layers·d FLOPs per token pair against 2·params ≈ 24·layers·d² per token): a quarter of
      // the recompute prior bounds any model with d_model ≥ 171, and noise cannot run it away.
      if (i === 5) return Math.min(prior.recompute / 4, Math.max(0, Number.isFinite(x) ? x : 0));
      return Math.min(theta0[i]! * bound, Math.max(theta0[i]! / bound, Number.isFinite(x) ? x : theta0[i]!));
    };
    const [recompute, host, ssd, peer, attention] = [fig(1), fig(2), fig(3), fig(4), fig(5)];
    const load = { ...(host !== undefined ? { host } : {}), ...(ssd !== undefined ? { ssd } : {}) };
    return {
      ...(recompute !== undefined ? { recomputeMsPerChunk: recompute } : {}),
      ...(attention !== undefined ? { attentionMsPerChunkPair: attention } : {}),
      ...(Object.keys(load).length > 0 ? { loadMsPerChunk: load } : {}),
      ...(peer !== undefined ? { peerMsPerChunk: peer } : {}),
    };
  }
}
