import type { ModelConfig } from '../model/model-config.js';
import { TensorNames, type HostTensor } from './model-weights.js';
import { SeededPrng, streamSeed } from './seeded.prng.js';

/**
 * Rotates the attention head bases of one layer in place, leaving the layer's function
 * unchanged while its KV cache becomes entirely different: per kv head, a seeded 2-D
 * rotation of each RoPE pair (i, i + headDim/2) is applied to the q and k projections
 * (same angles, and 2-D rotations of a pair commute with RoPE, so q·k is unchanged) and
 * another to the v projection, whose inverse is folded into the o projection's columns.
 *
 * Why: a synthetic derived model must have *known* critical layers. Random-weight models
 * have flat next-token distributions, so plain weight noise in layers [a, b) also shifts
 * the hidden state of every later layer enough to flip top-1 tokens, and the "critical"
 * range smears to the top of the model. A rotated layer's KV is useless to the other
 * model, yet nothing above it changes: reusing KV is wrong exactly in [a, b).
 * Not for models with q/k norm or q/k/v bias (their per-dimension terms do not commute).
 */
export function rotateHeadBases(tensors: Map<string, HostTensor>, c: ModelConfig, layer: number, seed: number): void {
  if (c.qkNorm || c.qkvBias) throw new Error(`head-basis rotation needs a model without q/k norm and q/k/v bias (${c.id})`);
  const rng = new SeededPrng(streamSeed(seed, `rotate:${layer}`));
  const half = c.headDim / 2;
  const groupSize = c.heads / c.kvHeads;
  const get = (
    suffix: 'self_attn.q_proj.weight' | 'self_attn.k_proj.weight' | 'self_attn.v_proj.weight' | 'self_attn.o_proj.weight',
  ): HostTensor => {
    const t = tensors.get(TensorNames.layer(layer, suffix));
    if (!t) throw new Error(`model ${c.id}: layer ${layer} has no ${suffix}`);
    return t;
  };
  const [q, k, v, o] = [
    get('self_attn.q_proj.weight'),
    get('self_attn.k_proj.weight'),
    get('self_attn.v_proj.weight'),
    get('self_attn.o_proj.weight'),
  ];
  const d = c.dModel;
  const heads = c.heads * c.headDim;
  for (let g = 0; g < c.kvHeads; g++) {
    for (let i = 0; i < half; i++) {
      const qk = rng.nextFloat() * 2 * Math.PI;
      const vo = rng.nextFloat() * 2 * Math.PI;
      const a = g * c.headDim + i;
      rotateRows(k.data, d, a, a + half, qk);
      rotateRows(v.data, d, a, a + half, vo);
      for (let h = g * groupSize; h < (g + 1) * groupSize; h++) {
        const qa = h * c.headDim + i;
        rotateRows(q.data, d, qa, qa + half, qk);
        rotateColumns(o.data, d, heads, qa, qa + half, vo);
      }
    }
  }
}

/** Rows i, j of a row-major [*, cols] matrix ← R(φ) [row i; row j]. */
function rotateRows(m: Float32Array, cols: number, i: number, j: number, phi: number): void {
  const [cs, sn] = [Math.cos(phi), Math.sin(phi)];
  for (let x = 0; x < cols; x++) {
    const a = m[i * cols + x]!;
    const b = m[j * cols + x]!;
    m[i * cols + x] = cs * a - sn * b;
    m[j * cols + x] = sn * a + cs * b;
  }
}

/** Columns i, j of a row-major [rows, cols] matrix M ← M R(φ)ᵀ, undoing rotateRows on its input. */
function rotateColumns(m: Float32Array, rows: number, cols: number, i: number, j: number, phi: number): void {
  const [cs, sn] = [Math.cos(phi), Math.sin(phi)];
  for (let r = 0; r < rows; r++) {
    const a = m[r * cols + i]!;
    const b = m[r * cols + j]!;
    m[r * cols + i] = cs * a - sn * b;
    m[r * cols + j] = sn * a + cs * b;
  }
}
