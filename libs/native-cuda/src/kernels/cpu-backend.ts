import type { KernelBackend } from './backend.interface.js';
import { rangeError, typeError, ValidationCode } from '../native.error.js';
import { requireElements, requireFloat32Array as f32, requireSize } from './kernel-args.validator.js';
import { encodeCall, type KernelCall, type KernelOp, validateCall } from './kernel.contract.js';
import { type RawCpuKernels, rawKernels } from './kernel.addon.js';
import { DirectKernels } from './direct-kernels.js';

const elements = (name: string, t: Float32Array): number => f32(name, t).length;
const wire = (_name: string, t: Float32Array): Float32Array => t;

/**
 * fp32 kernels in C++ on the kernels' own parallel-for pool. Tensors are plain
 * Float32Arrays: the native code works on their memory in place (no copies). Direct calls
 * are synchronous; `submit` runs a list on the addon's compute thread. Results are
 * deterministic and batch invariant (see backend.interface.ts).
 */
export class CpuKernelBackend extends DirectKernels<Float32Array> implements KernelBackend<Float32Array> {
  readonly name = 'cpu' as const;
  private readonly k: RawCpuKernels;

  constructor() {
    super();
    this.k = rawKernels().cpu;
  }

  /** Lanes of the native kernel pool: MNEMO_CPU_THREADS, else the usable cores (affinity and cgroup quota). */
  get threads(): number {
    return this.k.threads();
  }

  /** The vector path chosen by CPUID at load (the same on every run of one machine). */
  get isa(): { name: string; fma: boolean; mr: number; nr: number } {
    return this.k.isa();
  }

  /** Register-only multiply-add GFLOP/s on every kernel lane, over about `seconds` (blocks the caller). */
  measurePeakGflops(seconds = 0.5): number {
    return this.k.peakGflops(seconds);
  }

  /** Read bandwidth in GB/s over a `bytes` buffer on every kernel lane, best of `reps` (blocks the caller). */
  measureReadGbs(bytes = 512 * 2 ** 20, reps = 3): number {
    return this.k.memReadGbs(bytes, reps);
  }

  alloc(elements: number): Float32Array {
    return new Float32Array(requireSize('elements', elements));
  }

  upload(dst: Float32Array, src: Float32Array): void {
    requireElements('dst', f32('dst', dst).length, f32('src', src).length);
    dst.set(src);
  }

  hostView(src: Float32Array): Float32Array {
    return f32('src', src);
  }

  hostArray(t: Float32Array): Float32Array {
    return f32('t', t);
  }

  /** A copy, like the device backend's download, so callers cannot rely on aliasing. */
  download(src: Float32Array, elements: number): Float32Array {
    requireElements('src', f32('src', src).length, requireSize('elements', elements));
    return src.slice(0, elements);
  }

  free(_t: Float32Array): void {
    // Garbage collected; nothing native to release.
  }

  packWeight(w: Float32Array, n: number, k: number): Float32Array {
    const out = new Float32Array(this.k.packedElems(requireSize('n', n), requireSize('k', k)));
    this.direct('packWeight', [out, w, n, k]);
    return out;
  }

  matmulPacked(out: Float32Array, x: Float32Array, w: Float32Array, m: number, n: number, k: number): void {
    this.direct('matmulPacked', [out, x, w, m, n, k]);
  }

  async submit(calls: readonly KernelCall<Float32Array>[]): Promise<void> {
    if (!Array.isArray(calls)) throw typeError('calls must be an array of kernel calls');
    const list = calls.map((c) => [c.op, ...this.checked(c.op, c.args)]);
    const stack = new Error().stack;
    try {
      await this.k.run(list);
    } catch (e) {
      if (e instanceof Error && stack) e.stack = `${e.stack}\n    --- submitted at ---\n${stack.split('\n').slice(1).join('\n')}`;
      throw e;
    }
  }

  private checked(op: KernelOp, args: readonly unknown[]): unknown[] {
    validateCall(op, args, elements);
    if (op === 'matmul' || op === 'matmulPacked')
      requireDisjoint(args[0] as Float32Array, args[1] as Float32Array, args[2] as Float32Array);
    if (op === 'matmulPacked') {
      const [, , w, , n, k] = args as [Float32Array, Float32Array, Float32Array, number, number, number];
      if (w.length !== this.k.packedElems(n, k))
        throw rangeError(
          `matmulPacked: w holds ${w.length} floats, not a weight packed for n=${n}, k=${k}`,
          ValidationCode.InvalidArgValue,
        );
    }
    return encodeCall(op, args, wire);
  }

  protected direct(op: KernelOp, args: readonly unknown[]): void {
    const wireArgs = this.checked(op, args);
    (this.k[op] as (...a: unknown[]) => void)(...wireArgs);
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
