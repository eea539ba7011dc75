import { cudaInfo } from '../native.info.js';
import { typeError } from '../native.error.js';
import type { AttentionBatch, KernelBackend, KvGeometry } from './backend.interface.js';
import { checkArgs, requireElements, requireFinite, requireFloat32Array, requireSize } from './kernel-args.validator.js';
import { batch5, geom4, type RawCudaKernels, type RawDeviceHandle, rawKernels } from './kernel.addon.js';

/** Storage type of device tensors; arithmetic is fp32 either way. */
export type DeviceDtype = 'f16' | 'bf16';

/**
 * A device allocation. Ownership: the backend that allocated it; `free()` releases the
 * memory at once (later use throws), otherwise it goes when JS collects the tensor.
 */
export class DeviceTensor {
  private handleOrNull: RawDeviceHandle | null;

  /** @internal created by CudaKernelBackend.alloc */
  constructor(handle: RawDeviceHandle, readonly elements: number, readonly dtype: DeviceDtype) {
    this.handleOrNull = handle;
  }

  get freed(): boolean {
    return this.handleOrNull === null;
  }

  /** @internal */
  handle(name: string): RawDeviceHandle {
    if (this.handleOrNull === null) throw typeError(`${name} is a freed DeviceTensor`);
    return this.handleOrNull;
  }

  /** @internal */
  release(): RawDeviceHandle | null {
    const h = this.handleOrNull;
    this.handleOrNull = null;
    return h;
  }
}

function tensor(name: string, t: DeviceTensor): number {
  if (!(t instanceof DeviceTensor)) throw typeError(`${name} must be a DeviceTensor`);
  t.handle(name);
  return t.elements;
}

export interface CudaBackendOptions {
  /** Storage type of every tensor this backend allocates; default 'bf16' (Llama weights' native type). */
  dtype?: DeviceDtype;
}

/**
 * The kernels on the GPU: fp16/bf16 storage, fp32 accumulation, ops enqueued in call order
 * on the device's default stream; `download` synchronises. Index arrays stay host
 * Int32Arrays (copied per call). Only constructible where a CUDA device is present.
 */
export class CudaKernelBackend implements KernelBackend<DeviceTensor> {
  readonly name = 'cuda' as const;
  readonly dtype: DeviceDtype;
  private readonly k: RawCudaKernels;

  constructor(options: CudaBackendOptions = {}) {
    const dtype = options.dtype ?? 'bf16';
    if (dtype !== 'f16' && dtype !== 'bf16') throw typeError(`dtype must be 'f16' or 'bf16', got ${String(dtype)}`);
    const raw = rawKernels().cuda;
    const info = cudaInfo();
    if (raw === null || !info.compiled) {
      throw new Error('cuda kernel backend unavailable: the native addon was built without CUDA (nvcc not found at build time)');
    }
    if (info.deviceCount === 0) {
      throw new Error(`cuda kernel backend unavailable: no CUDA device (${info.error ?? 'unknown reason'})`);
    }
    this.k = raw;
    this.dtype = dtype;
  }

  alloc(elements: number): DeviceTensor {
    requireSize('elements', elements);
    return new DeviceTensor(this.k.alloc(elements, this.dtype), elements, this.dtype);
  }

  upload(dst: DeviceTensor, src: Float32Array): void {
    requireElements('dst', tensor('dst', dst), requireFloat32Array('src', src).length);
    this.k.upload(dst.handle('dst'), src);
  }

  download(src: DeviceTensor, elements: number): Float32Array {
    requireElements('src', tensor('src', src), requireSize('elements', elements));
    return this.k.download(src.handle('src'), elements);
  }

  free(t: DeviceTensor): void {
    if (!(t instanceof DeviceTensor)) throw typeError('t must be a DeviceTensor');
    const h = t.release();
    if (h !== null) this.k.free(h);
  }

  embedding(out: DeviceTensor, table: DeviceTensor, ids: Int32Array, dim: number): void {
    checkArgs.embedding(tensor('out', out), tensor('table', table), ids, dim);
    this.k.embedding(out.handle('out'), table.handle('table'), ids, dim);
  }

  rmsnorm(out: DeviceTensor, x: DeviceTensor, weight: DeviceTensor, rows: number, dim: number, eps: number): void {
    checkArgs.rmsnorm(tensor('out', out), tensor('x', x), tensor('weight', weight), rows, dim, eps);
    this.k.rmsnorm(out.handle('out'), x.handle('x'), weight.handle('weight'), rows, dim, eps);
  }

  matmul(out: DeviceTensor, x: DeviceTensor, w: DeviceTensor, m: number, n: number, k: number): void {
    checkArgs.matmul(tensor('out', out), tensor('x', x), tensor('w', w), m, n, k);
    if (out === x || out === w) throw typeError('matmul: out must not alias x or w');
    this.k.matmul(out.handle('out'), x.handle('x'), w.handle('w'), m, n, k);
  }

  rope(x: DeviceTensor, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void {
    checkArgs.rope(tensor('x', x), positions, rows, numHeads, headDim, theta);
    this.k.rope(x.handle('x'), positions, rows, numHeads, headDim, theta);
  }

  siluMul(out: DeviceTensor, gate: DeviceTensor, up: DeviceTensor, n: number): void {
    checkArgs.elementwise(tensor('out', out), tensor('gate', gate), tensor('up', up), n);
    this.k.siluMul(out.handle('out'), gate.handle('gate'), up.handle('up'), n);
  }

  add(out: DeviceTensor, a: DeviceTensor, b: DeviceTensor, n: number): void {
    checkArgs.elementwise(tensor('out', out), tensor('a', a), tensor('b', b), n);
    this.k.add(out.handle('out'), a.handle('a'), b.handle('b'), n);
  }

  addBias(out: DeviceTensor, x: DeviceTensor, bias: DeviceTensor, rows: number, n: number): void {
    checkArgs.addBias(tensor('out', out), tensor('x', x), tensor('bias', bias), rows, n);
    this.k.addBias(out.handle('out'), x.handle('x'), bias.handle('bias'), rows, n);
  }

  writeKv(cache: DeviceTensor, k: DeviceTensor, v: DeviceTensor, slots: Int32Array, layer: number, geom: KvGeometry): void {
    checkArgs.writeKv(tensor('cache', cache), tensor('k', k), tensor('v', v), slots, layer, geom);
    this.k.writeKv(cache.handle('cache'), k.handle('k'), v.handle('v'), slots, layer, ...geom4(geom));
  }

  pagedAttention(out: DeviceTensor, q: DeviceTensor, cache: DeviceTensor, layer: number, numHeads: number,
    geom: KvGeometry, batch: AttentionBatch, scale: number): void {
    checkArgs.pagedAttention(tensor('out', out), tensor('q', q), tensor('cache', cache), layer, numHeads, geom, batch, scale);
    if (geom.headDim > 256) throw typeError('cuda pagedAttention supports headDim <= 256');
    this.k.pagedAttention(out.handle('out'), q.handle('q'), cache.handle('cache'), layer, numHeads, ...geom4(geom), ...batch5(batch), scale);
  }

  copyBlocks(cache: DeviceTensor, src: Int32Array, dst: Int32Array, geom: KvGeometry): void {
    checkArgs.copyBlocks(tensor('cache', cache), src, dst, geom);
    this.k.copyBlocks(cache.handle('cache'), src, dst, ...geom4(geom));
  }

  argmax(x: DeviceTensor, rows: number, n: number): Int32Array {
    checkArgs.rowwise(tensor('x', x), rows, n);
    const out = new Int32Array(rows);
    this.k.argmax(out, x.handle('x'), rows, n);
    return out;
  }

  softmax(out: DeviceTensor, x: DeviceTensor, rows: number, n: number, scale: number): void {
    checkArgs.rowwise(tensor('x', x), rows, n, tensor('out', out));
    requireFinite('scale', scale);
    this.k.softmax(out.handle('out'), x.handle('x'), rows, n, scale);
  }
}
