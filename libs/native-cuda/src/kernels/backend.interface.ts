/**
 * The kernel surface the reference engine is written against. One implementation
 * per backend (cpu: fp32 C++; cuda: fp16/bf16 storage with fp32 accumulation,
 * built when nvcc is present). Policy lives elsewhere: these only compute.
 *
 * Conventions
 * - Row-major everywhere. Weights use the Hugging Face layout [out_features, in_features].
 * - `T` is the backend's tensor handle: Float32Array on cpu, an opaque device buffer on cuda.
 * - Sizes are in elements. Outputs may alias inputs only where a parameter says so.
 * - Determinism (cpu): every output element is reduced in an order that depends only on
 *   the reduction length — never on the number of rows, the batch composition or the
 *   thread count — so a token's logits are bit-identical whether it is computed in a
 *   prefill of N rows, a decode batch, or alone. Exactness tests depend on this.
 *   (cuda gives fp16/bf16-rounded results and does not promise batch invariance.)
 * - Index arrays (ids, positions, slots, block tables) are host Int32Arrays on every backend.
 * - Every method validates its arguments and throws TypeError/RangeError (with a Node-style
 *   `code`) before touching memory; device failures throw NativeError.
 *
 * Additions to the first version of this surface (all backward compatible):
 * - `addBias`, `argmax`, `softmax` (q/k/v projection biases and sampling);
 * - `writeKv` skips rows whose slot is negative (padding rows);
 * - the cache tensor must hold a whole number of blocks: numBlocks = elements / blockElems;
 * - `packWeight` + `matmulPacked` (weights stored in the backend's GEMM layout once) and
 *   `submit` (a list of calls run in order off the JS thread where the backend can);
 * - optional `hostView` / `hostArray` (host memory used as a tensor and back without a copy,
 *   host backends only).
 * Argument kinds and checks of every op are declared once in kernel.contract.ts.
 */

import type { KernelCall } from './kernel.contract.js';
import type { AttentionBatch, KvGeometry } from './kv-geometry.js';

export { kvBlockElements, type AttentionBatch, type KvGeometry } from './kv-geometry.js';

export interface KernelBackend<T> {
  readonly name: 'cpu' | 'cuda';
  alloc(elements: number): T;
  upload(dst: T, src: Float32Array): void;
  download(src: T, elements: number): Float32Array;
  free(t: T): void;
  /**
   * Host memory as a tensor the kernels read in place, where the backend's tensors are host
   * memory (cpu: src itself); absent where they are not (cuda: upload into an alloc instead).
   * Saves a copy of every restored layer. The caller must not write src while it is in use.
   */
  hostView?(src: Float32Array): T;
  /** The host memory a tensor is, where tensors are host memory (cpu: t itself); absent on cuda. */
  hostArray?(t: T): Float32Array;

  /** out[rows, dim] = table[ids[r], :] — table [vocab, dim] with vocab = elements / dim; rows = ids.length. */
  embedding(out: T, table: T, ids: Int32Array, dim: number): void;
  /** out[rows, dim] = x / rms(x) * weight — weight [dim]. out may alias x. */
  rmsnorm(out: T, x: T, weight: T, rows: number, dim: number, eps: number): void;
  /** out[m, n] = x[m, k] · w[n, k]ᵀ. out must not alias x or w. */
  matmul(out: T, x: T, w: T, m: number, n: number, k: number): void;
  /**
   * A weight w[n, k] in the layout this backend's GEMM reads (cpu: panels for the machine's
   * vector path, a new tensor; cuda: w itself). Weights never change after upload, so the
   * engine packs each once. The result is only meaningful to matmulPacked with the same n, k.
   */
  packWeight(w: T, n: number, k: number): T;
  /** out[m, n] = x[m, k] · wᵀ with w from packWeight(·, n, k); bit-identical to matmul on the unpacked w. */
  matmulPacked(out: T, x: T, w: T, m: number, n: number, k: number): void;
  /**
   * Runs the calls in order and resolves when all are done. Every call is validated before
   * anything runs (a bad one throws and nothing runs). cpu: the list runs on the addon's own
   * threads, so the JS thread is free meanwhile — and must not write any tensor of the list,
   * nor read one the list writes, until the Promise settles. cuda: the calls are enqueued on
   * the device stream at once.
   */
  submit(calls: readonly KernelCall<T>[]): Promise<void>;
  /** In place on x[rows, numHeads * headDim]; Hugging Face rotate_half (NeoX) convention. */
  rope(x: T, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void;
  /** out[n] = silu(gate[n]) * up[n]. out may alias gate. */
  siluMul(out: T, gate: T, up: T, n: number): void;
  /** out[n] = a[n] + b[n]. out may alias a. */
  add(out: T, a: T, b: T, n: number): void;
  /**
   * Writes k/v rows [rows, numKvHeads * headDim] of one layer into the cache at
   * slots[r] = block * blockSize + offset; rows = slots.length. A negative slot skips its row.
   */
  writeKv(cache: T, k: T, v: T, slots: Int32Array, layer: number, geom: KvGeometry): void;
  /**
   * Causal grouped-query attention over the paged cache for one layer.
   * q/out: [rows, numHeads * headDim]. Row i of sequence s sits at position
   * contextLen[s] - (queryStart[s+1] - queryStart[s]) + i and attends to positions ≤ it.
   */
  pagedAttention(out: T, q: T, cache: T, layer: number, numHeads: number, geom: KvGeometry, batch: AttentionBatch, scale: number): void;
  /**
   * Copies whole blocks (all layers) src[i] → dst[i] inside one cache; used for copy-on-write
   * and compaction. Pairs apply in order i = 0, 1, … (a dst may be a later pair's src).
   */
  copyBlocks(cache: T, src: Int32Array, dst: Int32Array, geom: KvGeometry): void;

  /** out[rows, n] = x[rows, n] + bias[n] (Qwen-style q/k/v projection bias). out may alias x. */
  addBias(out: T, x: T, bias: T, rows: number, n: number): void;
  /** Per row of x[rows, n]: the index of the largest value (lowest index on ties; NaN never wins). */
  argmax(x: T, rows: number, n: number): Int32Array;
  /** out[rows, n] = softmax(x * scale) per row (scale = 1 / temperature). out may alias x. */
  softmax(out: T, x: T, rows: number, n: number, scale: number): void;
}
