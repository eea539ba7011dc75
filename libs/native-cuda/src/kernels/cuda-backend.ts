import { cudaInfo } from '../native.info.js';
import { typeError } from '../native.error.js';
import type { AttentionBatch, KernelBackend, KvGeometry } from './backend.interface.js';
import { requireElements, requireFloat32Array, requireSize } from './kernel-args.validator.js';
import { encodeCall, type KernelCall, type KernelOp, type ListOp, validateCall } from './kernel.contract.js';
import { type RawCudaKernels, type RawDeviceHandle, rawKernels } from './kernel.addon.js';

/** Storage type of device tensors; arithmetic is fp32 either way. */
export type DeviceDtype = 'f16' | 'bf16';

/**
 * A device allocation. Ownership: the backend that allocated it; `free()` releases the
 * memory at once (later use throws), otherwise it goes when JS collects the tensor.
 */
export class DeviceTensor {
  private handleOrNull: RawDeviceHandle | null;

  /** @internal created by CudaKernelBackend.alloc */
  constructor(
    handle: RawDeviceHandle,
    readonly elements: number,
    readonly dtype: DeviceDtype,
  ) {
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
    this.direct('embedding', [out, table, ids, dim]);
  }

  rmsnorm(out: DeviceTensor, x: DeviceTensor, weight: DeviceTensor, rows: number, dim: number, eps: number): void {
    this.direct('rmsnorm', [out, x, weight, rows, dim, eps]);
  }

  matmul(out: DeviceTensor, x: DeviceTensor, w: DeviceTensor, m: number, n: number, k: number): void {
    if (out === x || out === w) throw typeError('matmul: out must not alias x or w');
    this.direct('matmul', [out, x, w, m, n, k]);
  }

  /** The device GEMM reads the Hugging Face layout as uploaded: w itself. */
  packWeight(w: DeviceTensor, n: number, k: number): DeviceTensor {
    validateCall('packWeight', [w, w, n, k], tensor);
    return w;
  }

  matmulPacked(out: DeviceTensor, x: DeviceTensor, w: DeviceTensor, m: number, n: number, k: number): void {
    this.matmul(out, x, w, m, n, k);
  }

  rope(x: DeviceTensor, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void {
    this.direct('rope', [x, positions, rows, numHeads, headDim, theta]);
  }

  siluMul(out: DeviceTensor, gate: DeviceTensor, up: DeviceTensor, n: number): void {
    this.direct('siluMul', [out, gate, up, n]);
  }

  add(out: DeviceTensor, a: DeviceTensor, b: DeviceTensor, n: number): void {
    this.direct('add', [out, a, b, n]);
  }

  addBias(out: DeviceTensor, x: DeviceTensor, bias: DeviceTensor, rows: number, n: number): void {
    this.direct('addBias', [out, x, bias, rows, n]);
  }

  writeKv(cache: DeviceTensor, k: DeviceTensor, v: DeviceTensor, slots: Int32Array, layer: number, geom: KvGeometry): void {
    this.direct('writeKv', [cache, k, v, slots, layer, geom]);
  }

  pagedAttention(
    out: DeviceTensor,
    q: DeviceTensor,
    cache: DeviceTensor,
    layer: number,
    numHeads: number,
    geom: KvGeometry,
    batch: AttentionBatch,
    scale: number,
  ): void {
    validateCall('pagedAttention', [out, q, cache, layer, numHeads, geom, batch, scale], tensor);
    if (geom.headDim > 256) throw typeError('cuda pagedAttention supports headDim <= 256');
    this.direct('pagedAttention', [out, q, cache, layer, numHeads, geom, batch, scale]);
  }

  copyBlocks(cache: DeviceTensor, src: Int32Array, dst: Int32Array, geom: KvGeometry): void {
    this.direct('copyBlocks', [cache, src, dst, geom]);
  }

  argmax(x: DeviceTensor, rows: number, n: number): Int32Array {
    const out = new Int32Array(Math.max(0, typeof rows === 'number' && Number.isInteger(rows) ? rows : 0));
    this.direct('argmax', [out, x, rows, n]);
    return out;
  }

  softmax(out: DeviceTensor, x: DeviceTensor, rows: number, n: number, scale: number): void {
    this.direct('softmax', [out, x, rows, n, scale]);
  }

  /** Device ops are asynchronous on the stream already: the calls are enqueued in order at once. */
  async submit(calls: readonly KernelCall<DeviceTensor>[]): Promise<void> {
    if (!Array.isArray(calls)) throw typeError('calls must be an array of kernel calls');
    for (const c of calls) validateCall(c.op, c.args, tensor);
    for (const c of calls) (this[c.op as ListOp] as (...a: unknown[]) => void).apply(this, c.args as unknown[]);
  }

  private direct(op: Exclude<KernelOp, 'matmulPacked' | 'packWeight'>, args: readonly unknown[]): void {
    validateCall(op, args, tensor);
    (this.k[op] as (...a: unknown[]) => void)(...encodeCall(op, args, (name, t: DeviceTensor) => t.handle(name)));
  }
}
