import type { AttentionBatch, KvGeometry } from '../backend.interface.js';

/**
 * Test fixtures for the kernel specs: seeded inputs, sentinel-guarded outputs, a paged
 * cache with randomly scattered blocks and naive float64 references. Not used at run time.
 */

/** mulberry32: small, seedable, the same sequence on every platform. */
export class Rng {
  constructor(private state: number) {}
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hiExclusive: number): number {
    return lo + Math.floor(this.next() * (hiExclusive - lo));
  }
  floats(n: number, lo = -1, hi = 1): Float32Array {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * this.next();
    return out;
  }
}

const GUARD = 32;
const SENTINEL = -7.25e30;

/** A view of `n` elements followed, in the same ArrayBuffer, by sentinels a kernel must not touch. */
export class Guarded {
  private readonly buf: Float32Array;
  readonly view: Float32Array;
  constructor(n: number, fill = 0) {
    this.buf = new Float32Array(n + GUARD).fill(SENTINEL);
    this.view = this.buf.subarray(0, n);
    this.view.fill(fill);
  }
  intact(): boolean {
    for (let i = this.view.length; i < this.buf.length; i++) if (this.buf[i] !== Math.fround(SENTINEL)) return false;
    return true;
  }
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
  }
  return worst;
}

export function naiveMatmul(x: Float32Array, w: Float32Array, m: number, n: number, k: number): Float64Array {
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += x[i * k + p]! * w[j * k + p]!;
      out[i * n + j] = s;
    }
  return out;
}

export function naiveRmsnorm(x: Float32Array, w: Float32Array, rows: number, dim: number, eps: number): Float64Array {
  const out = new Float64Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    let ss = 0;
    for (let i = 0; i < dim; i++) ss += x[r * dim + i]! ** 2;
    const inv = 1 / Math.sqrt(ss / dim + eps);
    for (let i = 0; i < dim; i++) out[r * dim + i] = x[r * dim + i]! * inv * w[i]!;
  }
  return out;
}

/** transformers' rotate_half RoPE with fp32 inverse frequencies and angles, as it computes them. */
export function naiveRope(x: Float32Array, positions: Int32Array, rows: number, heads: number, hd: number, theta: number): Float64Array {
  const out = new Float64Array(x.length);
  const half = hd / 2;
  for (let r = 0; r < rows; r++)
    for (let h = 0; h < heads; h++) {
      const base = (r * heads + h) * hd;
      for (let i = 0; i < hd; i++) {
        const f = i % half;
        const inv = Math.fround(1 / Math.fround(Math.pow(theta, Math.fround((2 * f) / hd))));
        const ang = Math.fround(positions[r]! * inv);
        const rot = i < half ? -x[base + i + half]! : x[base + i - half]!;
        out[base + i] = x[base + i]! * Math.cos(ang) + rot * Math.sin(ang);
      }
    }
  return out;
}

/** The attention grid both backends are checked over: head dim × block size × (query heads, KV heads), MHA to 6:1 GQA. */
export const ATTENTION_CASES = [32, 64, 128].flatMap((headDim) =>
  [16, 8].flatMap((blockSize) =>
    [
      [4, 4],
      [8, 2],
      [6, 1],
    ].map(([heads, kvHeads]) => ({ headDim, blockSize, heads: heads!, kvHeads: kvHeads! })),
  ),
);

/** One sequence of a paged case: contiguous K/V (the naive view) and the blocks holding it. */
export interface PagedSeq {
  ctx: number;
  qLen: number;
  k: Float32Array; // [ctx, kvHeads, headDim]
  v: Float32Array;
  blocks: number[];
}

/**
 * A block-major cache `[block][layer][K|V][token][kv_head][head_dim]` holding each sequence's
 * K/V for `layer` in randomly permuted blocks; everything else is random noise, so reading a
 * wrong block, layer or head shows up. Written with its own index arithmetic (not the kernels').
 */
export class PagedCase {
  readonly numBlocks: number;
  readonly cache: Float32Array;
  readonly seqs: PagedSeq[] = [];

  constructor(
    readonly geom: KvGeometry,
    readonly layer: number,
    shape: ReadonlyArray<[ctx: number, qLen: number]>,
    rng: Rng,
  ) {
    const bs = geom.blockSize;
    const te = geom.numKvHeads * geom.headDim;
    this.numBlocks = shape.reduce((n, [ctx]) => n + Math.ceil(ctx / bs), 0) + 3;
    this.cache = rng.floats(this.numBlocks * geom.numLayers * 2 * bs * te, -4, 4);
    const perm = Array.from({ length: this.numBlocks }, (_, i) => i);
    for (let i = perm.length - 1; i > 0; i--) {
      const j = rng.int(0, i + 1);
      [perm[i], perm[j]] = [perm[j]!, perm[i]!];
    }
    let next = 0;
    for (const [ctx, qLen] of shape) {
      const seq: PagedSeq = { ctx, qLen, k: rng.floats(ctx * te), v: rng.floats(ctx * te), blocks: [] };
      for (let b = 0; b < Math.ceil(ctx / bs); b++) seq.blocks.push(perm[next++]!);
      for (let t = 0; t < ctx; t++) {
        this.cache.set(seq.k.subarray(t * te, (t + 1) * te), this.at(seq.blocks[Math.floor(t / bs)]!, 0, t % bs));
        this.cache.set(seq.v.subarray(t * te, (t + 1) * te), this.at(seq.blocks[Math.floor(t / bs)]!, 1, t % bs));
      }
      this.seqs.push(seq);
    }
  }

  /** Element offset of token `tok` (all kv heads) of `part` (0 K, 1 V) of this.layer in `block`. */
  at(block: number, part: 0 | 1, tok: number, layer = this.layer): number {
    const g = this.geom;
    return (((block * g.numLayers + layer) * 2 + part) * g.blockSize + tok) * g.numKvHeads * g.headDim;
  }

  /** The batch over `which` sequences, with `padding` unused (-1) table columns. */
  batch(which: number[], padding = 2): AttentionBatch {
    const maxBlocksPerSeq = Math.max(...which.map((i) => this.seqs[i]!.blocks.length)) + padding;
    const queryStart = new Int32Array(which.length + 1);
    const contextLen = new Int32Array(which.length);
    const blockTables = new Int32Array(which.length * maxBlocksPerSeq).fill(-1);
    which.forEach((i, s) => {
      const seq = this.seqs[i]!;
      queryStart[s + 1] = queryStart[s]! + seq.qLen;
      contextLen[s] = seq.ctx;
      blockTables.set(seq.blocks, s * maxBlocksPerSeq);
    });
    return { numSeqs: which.length, queryStart, contextLen, blockTables, maxBlocksPerSeq };
  }
}

/** Naive causal grouped-query attention over one sequence's contiguous K/V, in float64. */
export function naiveAttention(q: Float32Array, seq: PagedSeq, geom: KvGeometry, heads: number, scale: number): Float64Array {
  const hd = geom.headDim;
  const te = geom.numKvHeads * hd;
  const group = heads / geom.numKvHeads;
  const out = new Float64Array(seq.qLen * heads * hd);
  for (let i = 0; i < seq.qLen; i++) {
    const pos = seq.ctx - seq.qLen + i;
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor(h / group);
      const qo = (i * heads + h) * hd;
      const scores = new Float64Array(pos + 1);
      for (let j = 0; j <= pos; j++) {
        let d = 0;
        for (let e = 0; e < hd; e++) d += q[qo + e]! * seq.k[j * te + kvh * hd + e]!;
        scores[j] = d * scale;
      }
      const mx = Math.max(...scores);
      let sum = 0;
      for (let j = 0; j <= pos; j++) sum += scores[j] = Math.exp(scores[j]! - mx);
      for (let e = 0; e < hd; e++) {
        let acc = 0;
        for (let j = 0; j <= pos; j++) acc += scores[j]! * seq.v[j * te + kvh * hd + e]!;
        out[qo + e] = acc / sum;
      }
    }
  }
  return out;
}
