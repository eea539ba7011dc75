import { cudaInfo } from '../native.info.js';
import { typeError } from '../native.error.js';
import type { KernelBackend, KvGeometry } from './backend.interface.js';
import { requireElements, requireFloat32Array, requireSize } from './kernel-args.validator.js';
import { encodeCall, type KernelCall, type ListOp, validateCall } from './kernel.contract.js';
import { type RawCudaKernels, type RawDeviceHandle, rawKernels } from './kernel.addon.js';
import { type DirectOp, DirectKernels } from './direct-kernels.js';

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
export class CudaKernelBackend extends DirectKernels<DeviceTensor> implements KernelBackend<DeviceTensor> {
  readonly name = 'cuda' as const;
  readonly dtype: DeviceDtype;
  private readonly k: RawCudaKernels;

  constructor(options: CudaBackendOptions = {}) {
    super();
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

  /** The device GEMM reads the Hugging Face layout as uploaded: w itself. */
  packWeight(w: DeviceTensor, n: number, k: number): DeviceTensor {
    validateCall('packWeight', [w, w, n, k], tensor);
    return w;
  }

  matmulPacked(out: DeviceTensor, x: DeviceTensor, w: DeviceTensor, m: number, n: number, k: number): void {
    this.matmul(out, x, w, m, n, k);
  }

  /** Device ops are asynchronous on the stream already: the calls are enqueued in order at once. */
  async submit(calls: readonly KernelCall<DeviceTensor>[]): Promise<void> {
    if (!Array.isArray(calls)) throw typeError('calls must be an array of kernel calls');
    for (const c of calls) validateCall(c.op, c.args, tensor);
    for (const c of calls) (this[c.op as ListOp] as (...a: unknown[]) => void).apply(this, c.args as unknown[]);
  }

  protected direct(op: DirectOp, args: readonly unknown[]): void {
    if (op === 'matmul' && (args[0] === args[1] || args[0] === args[2])) throw typeError('matmul: out must not alias x or w');
    validateCall(op, args, tensor);
    if (op === 'pagedAttention' && (args[5] as KvGeometry).headDim > 256) throw typeError('cuda pagedAttention supports headDim <= 256');
    (this.k[op] as (...a: unknown[]) => void)(...encodeCall(op, args, (name, t: DeviceTensor) => t.handle(name)));
  }
}
