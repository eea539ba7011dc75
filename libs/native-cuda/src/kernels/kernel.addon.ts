import { nativeAddon } from '../addon.loader.js';

/**
 * The raw kernel functions of the addon (src/native/binding/kernels.binding.cc), unvalidated:
 * the backends in this folder validate first. Geometry travels as four numbers
 * (numLayers, numKvHeads, headDim, blockSize) and an attention batch as five
 * (numSeqs, queryStart, contextLen, blockTables, maxBlocksPerSeq).
 */
type Geom4 = [numLayers: number, numKvHeads: number, headDim: number, blockSize: number];
type Batch5 = [numSeqs: number, queryStart: Int32Array, contextLen: Int32Array, blockTables: Int32Array, maxBlocksPerSeq: number];

export interface RawKernels<T> {
  embedding(out: T, table: T, ids: Int32Array, dim: number): void;
  rmsnorm(out: T, x: T, weight: T, rows: number, dim: number, eps: number): void;
  matmul(out: T, x: T, w: T, m: number, n: number, k: number): void;
  rope(x: T, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void;
  siluMul(out: T, gate: T, up: T, n: number): void;
  add(out: T, a: T, b: T, n: number): void;
  addBias(out: T, x: T, bias: T, rows: number, n: number): void;
  writeKv(cache: T, k: T, v: T, slots: Int32Array, layer: number, ...geom: Geom4): void;
  pagedAttention(out: T, q: T, cache: T, layer: number, numHeads: number, ...rest: [...Geom4, ...Batch5, number]): void;
  copyBlocks(cache: T, src: Int32Array, dst: Int32Array, ...geom: Geom4): void;
  argmax(out: Int32Array, x: T, rows: number, n: number): void;
  softmax(out: T, x: T, rows: number, n: number, scale: number): void;
}

export interface RawCpuKernels extends RawKernels<Float32Array> {
  /** Workers of the kernels' parallel-for pool (MNEMO_CPU_THREADS or hardware concurrency). */
  threads(): number;
}

/** Opaque device allocation owned by the addon (a type-tagged Napi::External). */
export type RawDeviceHandle = { readonly __brand: 'mnemo.DeviceBuffer' };

export interface RawCudaKernels extends RawKernels<RawDeviceHandle> {
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

export function geom4(g: { numLayers: number; numKvHeads: number; headDim: number; blockSize: number }): Geom4 {
  return [g.numLayers, g.numKvHeads, g.headDim, g.blockSize];
}

export function batch5(b: {
  numSeqs: number;
  queryStart: Int32Array;
  contextLen: Int32Array;
  blockTables: Int32Array;
  maxBlocksPerSeq: number;
}): Batch5 {
  return [b.numSeqs, b.queryStart, b.contextLen, b.blockTables, b.maxBlocksPerSeq];
}
