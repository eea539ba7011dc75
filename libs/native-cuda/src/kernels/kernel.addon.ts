import { nativeAddon } from '../addon.loader.js';
import type { RawKernels } from './kernel.contract.js';

/**
 * The raw kernel functions of the addon (src/native/binding/kernels_*.binding.cc),
 * unvalidated: the backends in this folder validate first. Their argument lists are typed
 * from the contract table (kernel.contract.ts).
 */
export interface RawCpuKernels extends RawKernels<Float32Array> {
  /** Runs `[op, ...wireArgs]` entries in order on the addon's compute thread. */
  run(list: unknown[][]): Promise<void>;
  /** Floats a weight [n, k] takes once packed for this machine's GEMM path. */
  packedElems(n: number, k: number): number;
  /** Lanes of the kernels' parallel-for pool (MNEMO_CPU_THREADS or the usable cores). */
  threads(): number;
  /** The vector path chosen by CPUID at load: name, whether it fuses multiply-adds, GEMM tile. */
  isa(): { name: string; fma: boolean; mr: number; nr: number };
  /** Register-only multiply-add rate of the path on every lane (benchmarks; blocks the caller). */
  peakGflops(seconds: number): number;
  /** Read bandwidth over a `bytes` buffer on every lane, best of `reps` (benchmarks; blocks the caller). */
  memReadGbs(bytes: number, reps: number): number;
}

/** Opaque device allocation owned by the addon (a type-tagged Napi::External). */
export type RawDeviceHandle = { readonly __brand: 'mnemo.DeviceBuffer' };

export interface RawCudaKernels extends Omit<RawKernels<RawDeviceHandle>, 'matmulPacked' | 'packWeight'> {
  alloc(elements: number, dtype: 'f16' | 'bf16'): RawDeviceHandle;
  free(h: RawDeviceHandle): void;
  upload(dst: RawDeviceHandle, src: Float32Array): void;
  download(src: RawDeviceHandle, elements: number): Float32Array;
}

interface RawKernelExports {
  cpu: RawCpuKernels;
  /** null when the addon was built without nvcc. */
  cuda: RawCudaKernels | null;
}

export function rawKernels(): RawKernelExports {
  return nativeAddon()['kernels'] as RawKernelExports;
}
