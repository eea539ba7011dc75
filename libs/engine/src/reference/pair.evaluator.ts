import { ErrorCode, MnemoError, planReuse, type ReusePattern } from '@mnemo/kv-core';
import { SeededPrng } from '../weights/seeded.prng.js';
import type { ReferenceEngine } from './reference.engine.js';
import { argmax } from './token.sampler.js';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };

/** Quality and cost of one reuse pattern on a (base, derived) pair over a dataset (DroidSpeak §4.3). */
export interface PatternMeasure {
  readonly pattern: ReusePattern;
  /** Fraction of continuation positions where the pattern's top-1 token equals the derived model's own. */
  readonly top1Agreement: number;
  /** Mean KL(derived's own ‖ pattern) of next-token distributions over the continuation, in nats. */
  readonly meanKl: number;
  /**
   * Mean negative log-likelihood (nats) of the token that actually comes next at each scored
   * position (the given text; without it, the derived model's own greedy continuation).
   */
  readonly meanNll: number;
  /**
   * Task quality loss: the relative increase of that NLL over the derived model's own full
   * prefill, (pattern − own) / own. On held-out text it is the relative increase of the derived
   * model's bits per byte on those positions (the bytes cancel), the closest analogue here of a
   * task metric; negative when the pattern happens to predict the text better.
   */
  readonly taskLoss: number;
  readonly recomputedLayers: number;
  /** Bytes of the base's E cache shipped per prompt token (fp32 hidden state at the transition layer). */
  readonly eCacheBytesPerToken: number;
  /** Mean wall time of the partial prefill per prompt, and of the derived model's own full prefill. */
  readonly prefillMs: number;
  readonly fullPrefillMs: number;
}

interface Reference {
  readonly tokens: readonly number[];
  /** Base model's KV per layer (`[K|V][token][kv_head][head_dim]`) and hidden state entering each layer. */
  readonly baseKv: readonly Float32Array[];
  readonly baseE: ReadonlyMap<number, Float32Array>;
  /** Tokens fed after the prompt: the derived model's greedy continuation, or given text. */
  readonly continuation: readonly number[];
  /** The derived model's own top-1 token at each scored position (the prompt's last, then each fed token but the last). */
  readonly targets: readonly number[];
  /** The derived model's next-token log-probabilities at each scored position. */
  readonly logProbs: readonly Float64Array[];
  /** The derived model's own mean NLL of the token that comes next at each scored position. */
  readonly ownNll: number;
  readonly fullPrefillMs: number;
}

/** `count` seeded byte sequences of `length` tokens: the synthetic profiling dataset. */
export function syntheticPrompts(count: number, length: number, seed: number): number[][] {
  const rng = new SeededPrng(seed);
  return Array.from({ length: count }, () => Array.from({ length }, () => rng.nextU32() % 256));
}

function logSoftmax(row: Float32Array): Float64Array {
  let max = -Infinity;
  for (const x of row) if (x > max) max = x;
  let sum = 0;
  for (const x of row) sum += Math.exp(x - max);
  const lse = max + Math.log(sum);
  return Float64Array.from(row, (x) => x - lse);
}

/** Mean −log p(next) over positions, row i scoring `next[i]`. */
function meanNll(rows: readonly Float64Array[], next: readonly number[]): number {
  return rows.reduce((s, lp, i) => s - lp[next[i]!]!, 0) / rows.length;
}

function kl(p: Float64Array, q: Float64Array): number {
  let d = 0;
  for (let i = 0; i < p.length; i++) d += Math.exp(p[i]) * (p[i] - q[i]);
  return Math.max(0, d);
}

/**
 * Runs reuse patterns of a (base, derived) pair on the reference engine and compares each
 * with the derived model's own full prefill. `prepare` computes, once per prompt, the base
 * model's KV and E caches and the derived model's greedy continuation; `evaluate` then
 * partially prefills every prompt under a pattern and teacher-forces that continuation, so
 * a pattern is judged on exactly the tokens the derived model would have produced.
 */
export class PairEvaluator {
  private refs: Reference[] = [];
  private seq = 0;

  constructor(
    private readonly engine: ReferenceEngine,
    readonly base: string,
    readonly derived: string,
    private readonly continuationTokens = 16,
  ) {
    const b = engine.modelConfig(base);
    const d = engine.modelConfig(derived);
    if (b.layers !== d.layers || b.dModel !== d.dModel || b.kvHeads !== d.kvHeads || b.headDim !== d.headDim || b.vocab !== d.vocab) {
      throw new MnemoError(ErrorCode.InvalidRequest, `${base} and ${derived} differ in shape; KV cannot be reused across them`);
    }
    if (!Number.isInteger(continuationTokens) || continuationTokens < 1)
      throw new RangeError(`continuationTokens must be ≥ 1, got ${continuationTokens}`);
  }

  get layers(): number {
    return this.engine.modelConfig(this.derived).layers;
  }

  /**
   * Without `continuations`, each prompt is followed by the derived model's own greedy
   * continuation. With them (one per prompt, e.g. the held-out text that follows the prompt:
   * sliding windows over real text), that text is teacher-forced instead and each scored
   * position is judged against the derived model's own top-1 there.
   */
  async prepare(prompts: readonly (readonly number[])[], continuations?: readonly (readonly number[])[]): Promise<void> {
    if (prompts.length === 0) throw new MnemoError(ErrorCode.InvalidRequest, 'profiling needs at least one prompt');
    if (continuations && (continuations.length !== prompts.length || continuations.some((c) => c.length < 1))) {
      throw new MnemoError(ErrorCode.InvalidRequest, 'one non-empty continuation per prompt');
    }
    this.refs = [];
    for (const [i, tokens] of prompts.entries()) this.refs.push(await this.reference(tokens, continuations?.[i]));
  }

  /** Scored positions per evaluation: one per continuation token, over every prompt. */
  get scoredPositions(): number {
    return this.refs.reduce((s, r) => s + r.targets.length, 0);
  }

  async evaluate(pattern: ReusePattern): Promise<PatternMeasure> {
    if (this.refs.length === 0) throw new MnemoError(ErrorCode.Conflict, 'prepare() the dataset before evaluating patterns');
    const plan = planReuse(pattern, this.layers);
    let agree = 0;
    let klSum = 0;
    let nllSum = 0;
    let ownNllSum = 0;
    let positions = 0;
    let prefillMs = 0;
    for (const ref of this.refs) {
      const seqId = `pair-eval-${this.seq++}`;
      try {
        const t0 = performance.now();
        const r = await this.engine.partialPrefill(this.derived, GREEDY, {
          seqId,
          tokens: ref.tokens,
          pattern,
          fetchKv: (l) => ref.baseKv[l]!,
          fetchE: (l) => ref.baseE.get(l)!,
        });
        prefillMs += performance.now() - t0;
        const rows = [r.logits, ...(await this.teacherForce(seqId, ref.continuation))];
        rows.forEach((row, i) => {
          const lp = logSoftmax(row);
          if (argmax(row) === ref.targets[i]) agree++;
          klSum += kl(ref.logProbs[i]!, lp);
          nllSum -= lp[ref.continuation[i]!]!;
          positions++;
        });
        ownNllSum += ref.ownNll * rows.length;
      } finally {
        this.engine.release(seqId);
      }
    }
    const n = this.refs.length;
    return {
      pattern,
      top1Agreement: agree / positions,
      meanKl: klSum / positions,
      meanNll: nllSum / positions,
      taskLoss: ownNllSum > 0 ? (nllSum - ownNllSum) / ownNllSum : 0,
      recomputedLayers: plan.recomputed,
      eCacheBytesPerToken: plan.eLayer === null ? 0 : this.engine.modelConfig(this.derived).dModel * 4,
      prefillMs: prefillMs / n,
      fullPrefillMs: this.refs.reduce((s, r) => s + r.fullPrefillMs, 0) / n,
    };
  }

  close(): void {
    this.refs = [];
  }

  /** Feeds continuation[0..n-2] after the prompt; returns the logits row after each. */
  private async teacherForce(seqId: string, continuation: readonly number[]): Promise<Float32Array[]> {
    if (continuation.length < 2) return [];
    const [r] = await this.engine.step([{ seqId, tokens: continuation.slice(0, -1), logits: 'all' }]);
    const V = this.engine.modelConfig(this.derived).vocab;
    return Array.from({ length: continuation.length - 1 }, (_, i) => r!.logits.subarray(i * V, (i + 1) * V));
  }

  private async reference(tokens: readonly number[], given?: readonly number[]): Promise<Reference> {
    const L = this.layers;
    const N = tokens.length;
    const baseSeq = `pair-ref-${this.seq++}`;
    let baseKv: Float32Array[];
    let baseE: ReadonlyMap<number, Float32Array>;
    this.engine.openSequence(baseSeq, this.base, GREEDY);
    try {
      const [r] = await this.engine.step([{ seqId: baseSeq, tokens, logits: 'none' }], { captureLayers: [...Array(L).keys()] });
      baseE = r!.eCache;
      baseKv = Array.from({ length: L }, (_, l) =>
        this.engine.exportKv(baseSeq, { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: N }),
      );
    } finally {
      this.engine.release(baseSeq);
    }
    const ownSeq = `pair-ref-${this.seq++}`;
    this.engine.openSequence(ownSeq, this.derived, GREEDY);
    try {
      const t0 = performance.now();
      const [first] = await this.engine.step([{ seqId: ownSeq, tokens }]);
      const fullPrefillMs = performance.now() - t0;
      // Read the first row before the next step can reuse the engine's logits buffer.
      const continuation = [argmax(first!.logits)];
      const logProbs = [logSoftmax(first!.logits)];
      if (given) {
        const rows = await this.teacherForce(ownSeq, given);
        const targets = [continuation[0]!, ...rows.map(argmax)];
        const all = [...logProbs, ...rows.map(logSoftmax)];
        return { tokens, baseKv, baseE, continuation: given, targets, logProbs: all, ownNll: meanNll(all, given), fullPrefillMs };
      }
      while (continuation.length < this.continuationTokens) {
        const [r] = await this.engine.step([{ seqId: ownSeq, tokens: [continuation.at(-1)!] }]);
        continuation.push(argmax(r!.logits));
        logProbs.push(logSoftmax(r!.logits));
      }
      return {
        tokens,
        baseKv,
        baseE,
        continuation,
        targets: continuation,
        logProbs,
        ownNll: meanNll(logProbs, continuation),
        fullPrefillMs,
      };
    } finally {
      this.engine.release(ownSeq);
    }
  }
}
