import type { AttentionBatch, KernelBackend, KvGeometry } from './backend.interface.js';
import { rangeError, ValidationCode } from '../native.error.js';
import { checkArgs, requireElements, requireFinite, requireFloat32Array as f32, requireSize } from './kernel-args.validator.js';
import { batch5, geom4, type RawCpuKernels, rawKernels } from './kernel.addon.js';

/**
 * fp32 kernels in C++ on the kernels' own parallel-for pool. Tensors are plain
 * Float32Arrays: the native code works on their memory in place (no copies), synchronously.
 * Results are deterministic and batch invariant (see backend.interface.ts).
 */
export class CpuKernelBackend implements KernelBackend<Float32Array> {
  readonly name = 'cpu' as const;
  private readonly k: RawCpuKernels;

  constructor() {
    this.k = rawKernels().cpu;
  }

  /** Workers of the native pool: MNEMO_CPU_THREADS, else the hardware concurrency. */
  get threads(): number {
    return this.k.threads();
  }

  alloc(elements: number): Float32Array {
    return new Float32Array(requireSize('elements', elements));
  }

  upload(dst: Float32Array, src: Float32Array): void {
    requireElements('dst', f32('dst', dst).length, f32('src', src).length);
    dst.set(src);
  }

  /** A copy, like the device backend's download, so callers cannot rely on aliasing. */
  download(src: Float32Array, elements: number): Float32Array {
    requireElements('src', f32('src', src).length, requireSize('elements', elements));
    return src.slice(0, elements);
  }

  free(_t: Float32Array): void {
    // Garbage collected; nothing native to release.
  }

  embedding(out: Float32Array, table: Float32Array, ids: Int32Array, dim: number): void {
    checkArgs.embedding(f32('out', out).length, f32('table', table).length, ids, dim);
    this.k.embedding(out, table, ids, dim);
  }

  rmsnorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, dim: number, eps: number): void {
    checkArgs.rmsnorm(f32('out', out).length, f32('x', x).length, f32('weight', weight).length, rows, dim, eps);
    this.k.rmsnorm(out, x, weight, rows, dim, eps);
  }

  matmul(out: Float32Array, x: Float32Array, w: Float32Array, m: number, n: number, k: number): void {
    checkArgs.matmul(f32('out', out).length, f32('x', x).length, f32('w', w).length, m, n, k);
    if (out.buffer === x.buffer || out.buffer === w.buffer) requireDisjoint(out, x, w);
    this.k.matmul(out, x, w, m, n, k);
  }

  rope(x: Float32Array, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void {
    checkArgs.rope(f32('x', x).length, positions, rows, numHeads, headDim, theta);
    this.k.rope(x, positions, rows, numHeads, headDim, theta);
  }

  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, n: number): void {
    checkArgs.elementwise(f32('out', out).length, f32('gate', gate).length, f32('up', up).length, n);
    this.k.siluMul(out, gate, up, n);
  }

  add(out: Float32Array, a: Float32Array, b: Float32Array, n: number): void {
    checkArgs.elementwise(f32('out', out).length, f32('a', a).length, f32('b', b).length, n);
    this.k.add(out, a, b, n);
  }

  addBias(out: Float32Array, x: Float32Array, bias: Float32Array, rows: number, n: number): void {
    checkArgs.addBias(f32('out', out).length, f32('x', x).length, f32('bias', bias).length, rows, n);
    this.k.addBias(out, x, bias, rows, n);
  }

  writeKv(cache: Float32Array, k: Float32Array, v: Float32Array, slots: Int32Array, layer: number, geom: KvGeometry): void {
    checkArgs.writeKv(f32('cache', cache).length, f32('k', k).length, f32('v', v).length, slots, layer, geom);
    this.k.writeKv(cache, k, v, slots, layer, ...geom4(geom));
  }

  pagedAttention(out: Float32Array, q: Float32Array, cache: Float32Array, layer: number, numHeads: number,
    geom: KvGeometry, batch: AttentionBatch, scale: number): void {
    checkArgs.pagedAttention(f32('out', out).length, f32('q', q).length, f32('cache', cache).length, layer, numHeads, geom, batch, scale);
    this.k.pagedAttention(out, q, cache, layer, numHeads, ...geom4(geom), ...batch5(batch), scale);
  }

  copyBlocks(cache: Float32Array, src: Int32Array, dst: Int32Array, geom: KvGeometry): void {
    checkArgs.copyBlocks(f32('cache', cache).length, src, dst, geom);
    this.k.copyBlocks(cache, src, dst, ...geom4(geom));
  }

  argmax(x: Float32Array, rows: number, n: number): Int32Array {
    checkArgs.rowwise(f32('x', x).length, rows, n);
    const out = new Int32Array(rows);
    this.k.argmax(out, x, rows, n);
    return out;
  }

  softmax(out: Float32Array, x: Float32Array, rows: number, n: number, scale: number): void {
    checkArgs.rowwise(f32('x', x).length, rows, n, f32('out', out).length);
    requireFinite('scale', scale);
    this.k.softmax(out, x, rows, n, scale);
  }
}

function overlaps(a: Float32Array, b: Float32Array): boolean {
  return a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/** matmul writes out while still reading x and w: an overlap would read half-written rows. */
function requireDisjoint(out: Float32Array, x: Float32Array, w: Float32Array): void {
  if (overlaps(out, x) || overlaps(out, w)) {
    throw rangeError('matmul: out must not overlap x or w', ValidationCode.InvalidArgValue);
  }
}
