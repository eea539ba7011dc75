import type { AttentionBatch, KvGeometry } from './backend.interface.js';
import type { KernelOp } from './kernel.contract.js';

/** Ops a backend may hand straight to its addon: the packed GEMM differs by backend. */
export type DirectOp = Exclude<KernelOp, 'matmulPacked' | 'packWeight'>;

/**
 * The ops every backend passes to its addon unchanged, written once. A backend's `direct`
 * validates against the kernel contract and encodes its own tensors; checks that only one
 * backend needs (cuda: matmul aliasing, attention head size) live in its `direct`, so no op
 * is overridden just to add one.
 */
export abstract class DirectKernels<T> {
  protected abstract direct(op: DirectOp, args: readonly unknown[]): void;

  embedding(out: T, table: T, ids: Int32Array, dim: number): void {
    this.direct('embedding', [out, table, ids, dim]);
  }

  rmsnorm(out: T, x: T, weight: T, rows: number, dim: number, eps: number): void {
    this.direct('rmsnorm', [out, x, weight, rows, dim, eps]);
  }

  matmul(out: T, x: T, w: T, m: number, n: number, k: number): void {
    this.direct('matmul', [out, x, w, m, n, k]);
  }

  rope(x: T, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void {
    this.direct('rope', [x, positions, rows, numHeads, headDim, theta]);
  }

  siluMul(out: T, gate: T, up: T, n: number): void {
    this.direct('siluMul', [out, gate, up, n]);
  }

  add(out: T, a: T, b: T, n: number): void {
    this.direct('add', [out, a, b, n]);
  }

  addBias(out: T, x: T, bias: T, rows: number, n: number): void {
    this.direct('addBias', [out, x, bias, rows, n]);
  }

  writeKv(cache: T, k: T, v: T, slots: Int32Array, layer: number, geom: KvGeometry): void {
    this.direct('writeKv', [cache, k, v, slots, layer, geom]);
  }

  pagedAttention(out: T, q: T, cache: T, layer: number, numHeads: number, geom: KvGeometry, batch: AttentionBatch, scale: number): void {
    this.direct('pagedAttention', [out, q, cache, layer, numHeads, geom, batch, scale]);
  }

  copyBlocks(cache: T, src: Int32Array, dst: Int32Array, geom: KvGeometry): void {
    this.direct('copyBlocks', [cache, src, dst, geom]);
  }

  argmax(x: T, rows: number, n: number): Int32Array {
    const out = new Int32Array(Math.max(0, typeof rows === 'number' && Number.isInteger(rows) ? rows : 0));
    this.direct('argmax', [out, x, rows, n]);
    return out;
  }

  softmax(out: T, x: T, rows: number, n: number, scale: number): void {
    this.direct('softmax', [out, x, rows, n, scale]);
  }
}
