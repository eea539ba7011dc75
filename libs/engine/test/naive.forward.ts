/**
 * A deliberately naive, non-paged transformer forward in float64 plain loops: the
 * yardstick the engine's paged kernels are checked against. Shares nothing with the
 * engine but the weights.
 */
import type { ModelWeights } from '../src/weights/model-weights.js';

type Mat = Float64Array;

function t(w: ModelWeights, name: string): Float32Array {
  const x = w.tensors.get(name);
  if (!x) throw new Error(`missing ${name}`);
  return x.data;
}

function rmsnorm(x: Mat, w: Float32Array, eps: number): Mat {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * inv * w[i]);
}

function linear(x: Mat, w: Float32Array, out: number, bias?: Float32Array): Mat {
  const k = x.length;
  const y = new Float64Array(out);
  for (let j = 0; j < out; j++) {
    let s = bias ? bias[j] : 0;
    for (let i = 0; i < k; i++) s += x[i] * w[j * k + i];
    y[j] = s;
  }
  return y;
}

function rope(x: Mat, heads: number, hd: number, pos: number, theta: number): void {
  const half = hd / 2;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      const a = pos / Math.pow(theta, (2 * i) / hd);
      const x1 = x[h * hd + i];
      const x2 = x[h * hd + i + half];
      x[h * hd + i] = x1 * Math.cos(a) - x2 * Math.sin(a);
      x[h * hd + i + half] = x2 * Math.cos(a) + x1 * Math.sin(a);
    }
  }
}

function headNorm(x: Mat, heads: number, hd: number, w: Float32Array, eps: number): Mat {
  const out = new Float64Array(x.length);
  for (let h = 0; h < heads; h++) out.set(rmsnorm(x.subarray(h * hd, (h + 1) * hd), w, eps), h * hd);
  return out;
}

/** Logits `[N][vocab]` for every position of `tokens`. */
export function naiveForward(w: ModelWeights, tokens: readonly number[]): Float64Array[] {
  const c = w.config;
  const { dModel: d, heads: H, kvHeads: KH, headDim: hd } = c;
  const emb = t(w, 'model.embed_tokens.weight');
  let xs: Mat[] = tokens.map((id) => Float64Array.from(emb.subarray(id * d, (id + 1) * d)));
  for (let l = 0; l < c.layers; l++) {
    const p = (s: string): Float32Array => t(w, `model.layers.${l}.${s}`);
    const bias = (s: string): Float32Array | undefined => (c.qkvBias ? p(`self_attn.${s}_proj.bias`) : undefined);
    const qs: Mat[] = [];
    const ks: Mat[] = [];
    const vs: Mat[] = [];
    xs.forEach((x, pos) => {
      const h = rmsnorm(x, p('input_layernorm.weight'), c.rmsEps);
      let q = linear(h, p('self_attn.q_proj.weight'), H * hd, bias('q'));
      let k = linear(h, p('self_attn.k_proj.weight'), KH * hd, bias('k'));
      if (c.qkNorm) {
        q = headNorm(q, H, hd, p('self_attn.q_norm.weight'), c.rmsEps);
        k = headNorm(k, KH, hd, p('self_attn.k_norm.weight'), c.rmsEps);
      }
      rope(q, H, hd, pos, c.ropeTheta);
      rope(k, KH, hd, pos, c.ropeTheta);
      qs.push(q);
      ks.push(k);
      vs.push(linear(h, p('self_attn.v_proj.weight'), KH * hd, bias('v')));
    });
    xs = xs.map((x, pos) => {
      const attn = new Float64Array(H * hd);
      for (let h = 0; h < H; h++) {
        const kh = Math.floor(h / (H / KH));
        const scores = Array.from({ length: pos + 1 }, (_, j) => {
          let s = 0;
          for (let e = 0; e < hd; e++) s += qs[pos][h * hd + e] * ks[j][kh * hd + e];
          return s / Math.sqrt(hd);
        });
        const m = Math.max(...scores);
        const ex = scores.map((s) => Math.exp(s - m));
        const z = ex.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= pos; j++) for (let e = 0; e < hd; e++) attn[h * hd + e] += (ex[j] / z) * vs[j][kh * hd + e];
      }
      const o = linear(attn, p('self_attn.o_proj.weight'), d);
      const x1 = x.map((v, i) => v + o[i]);
      const h2 = rmsnorm(x1, p('post_attention_layernorm.weight'), c.rmsEps);
      const g = linear(h2, p('mlp.gate_proj.weight'), c.ffn);
      const u = linear(h2, p('mlp.up_proj.weight'), c.ffn);
      const a = g.map((gv, i) => (gv / (1 + Math.exp(-gv))) * u[i]);
      const dn = linear(a, p('mlp.down_proj.weight'), d);
      return x1.map((v, i) => v + dn[i]);
    });
  }
  const head = c.tieEmbeddings ? emb : t(w, 'lm_head.weight');
  return xs.map((x) => linear(rmsnorm(x, t(w, 'model.norm.weight'), c.rmsEps), head, c.vocab));
}
