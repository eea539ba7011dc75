import { createRequire } from 'node:module';

import { NativeError } from './native.error.js';

/** ABI the wrapper speaks; must equal `kNativeAbi` in src/native/core/version.h. */
export const EXPECTED_NATIVE_ABI = 3;

export interface NativeVersion {
  version: string;
  /** Whether the CUDA part was compiled in (nvcc was found at build time). */
  cuda: boolean;
  abi: number;
  napi: number;
}

export interface CudaDevice {
  ordinal: number;
  name: string;
  /** e.g. "9.0" */
  computeCapability: string;
  /** bytes */
  totalMemory: number;
  multiprocessors: number;
}

export interface CudaInfo {
  compiled: boolean;
  deviceCount: number;
  /** e.g. 13000 for CUDA 13.0; 0 when not compiled. */
  runtimeVersion: number;
  /** 0 when no driver is installed. */
  driverVersion: number;
  /** Why `deviceCount` is 0 (e.g. "cudaErrorInsufficientDriver: …"); null otherwise. */
  error: string | null;
  devices: CudaDevice[];
}

export interface NativeStats {
  /** Live buffers from allocHostBuffer in this process (freed by freeHostBuffer or when JS collects them). */
  hostBuffers: number;
  hostBytes: number;
  /** Live host pool regions in this process (freed by close() or when JS collects the pool). */
  poolRegions: number;
  poolBytes: number;
  closed: boolean;
}

/** The raw native HostPool object (see host-pool.device.ts for the validated wrapper). */
export interface RawHostPool {
  info(): { closed: boolean; bytes?: number; kind?: 'pinned' | 'pageable'; numaNode?: number | null; pinError?: string | null };
  close(): void;
}

export interface RawSsdPoolInfo {
  closed: boolean;
  path?: string;
  bytes?: number;
  blockSize?: number;
  memoryAlignment?: number;
  maxRequestBytes?: number;
  queueDepth?: number;
  backend?: 'io_uring' | 'pread';
  backendReason?: string | null;
  blockDevice?: boolean;
  created?: boolean;
}

export interface SsdPoolStats {
  /** Requests the kernel holds now: the device's queue depth in flight. */
  inFlight: number;
  /** The most requests ever in flight at once. */
  peakInFlight: number;
  /** Batches accepted and not yet completed. */
  queuedBatches: number;
  /** Requests (SQEs, or preadv/pwritev calls) issued since open. */
  requests: number;
  bytesRead: number;
  bytesWritten: number;
  /** Requests that failed. */
  errors: number;
}

/** The raw native SsdPool object (see ssd-pool.device.ts for the validated wrapper). */
export interface RawSsdPool {
  info(): RawSsdPoolInfo;
  stats(): SsdPoolStats;
  flush(): Promise<void>;
  beginClose(): void;
  close(): void;
}

/** What probeMemcpy measures natively (io.probes.ts adds the limit it implies). */
export interface MemcpyProbeTimes {
  bytes: number;
  /** Threads the copy was split across (the copy pool's, as transfers use). */
  threads: number;
  /** glibc memcpy, seconds per iteration (after one warm-up). */
  memcpySeconds: number[];
  /** The transfers' own copy kernel, interleaved with memcpy. */
  kernelSeconds: number[];
  /** A CRC32C-checksumming copy with the selected implementation (what a verified get pays). */
  crcCopySeconds: number[];
  /** The same with the `crc32`-instruction streams, for a same-process A/B against the selected one. */
  crcStreamsCopySeconds: number[];
}

export type RawOperand = ArrayBuffer | ArrayBufferView | RawHostPool | RawSsdPool;

/** The raw addon surface. Unvalidated: use the wrappers exported from index.ts. */
export interface NativeAddon {
  init(errorClass: typeof NativeError, threads: number): void;
  close(): void;
  version(): NativeVersion;
  cudaInfo(): CudaInfo;
  stats(): NativeStats;
  allocHostBuffer(bytes: number, alignment: number): ArrayBuffer;
  hostMemoryKind(): 'pinned' | 'pageable';
  batchCopy(buffers: readonly ArrayBuffer[], ranges: Float64Array): Promise<void>;
  freeHostBuffer(buffer: ArrayBuffer): void;
  externalMemory(): number;
  openHostPool(bytes: number, numaNode: number, populate: boolean, hugePages: boolean): Promise<RawHostPool>;
  numaNodes(): number[];
  openSsdPool(
    path: string,
    bytes: number,
    blockSize: number,
    queueDepth: number,
    maxRequestBytes: number,
    forcePread: boolean,
  ): Promise<RawSsdPool>;
  transfer(
    operands: readonly RawOperand[],
    ranges: Float64Array,
    crcs: Float64Array,
    onCompute?: boolean,
  ): Promise<{ crcs: Uint32Array; fusedCrcs: number }>;
  probeMemcpy(bytes: number, iterations: number, pieceBytes?: number, dstRingPieces?: number): Promise<MemcpyProbeTimes>;
  probeDirectIo(
    path: string,
    bytes: number,
    blockBytes: number,
    queueDepth: number,
    write: boolean,
    forcePread: boolean,
  ): Promise<{ bytes: number; seconds: number; backend: 'io_uring' | 'pread'; backendReason: string | null; queueDepth: number }>;
  dropPageCache(path: string): Promise<void>;
  ioInfo(): { uringCompiled: boolean; uringAvailable: boolean; uringReason: string | null; crc32c: string; copyKernel: string };
  crc32c(data: ArrayBuffer | ArrayBufferView, seed: number): number;
  crc32cImplementations(): string[];
  selectCrc32c(name: string): void;
  /** Bindings added by other files (kernels) register more functions. */
  [name: string]: unknown;
}

/**
 * Threads of the native copy pool: MNEMO_NATIVE_THREADS when set to a positive integer,
 * else 0 (the addon picks hardware_concurrency, at most 16).
 */
function threadCount(): number {
  const raw = process.env['MNEMO_NATIVE_THREADS'];
  const n = raw === undefined ? 0 : Number(raw);
  return Number.isInteger(n) && n > 0 && n <= 1024 ? n : 0;
}

function load(): NativeAddon {
  // Resolved relative to this file, so it works from src/ (jest) and dist/ (after tsc).
  const require = createRequire(import.meta.url);
  let addon: NativeAddon;
  try {
    addon = require('../build/Release/mnemo_native.node') as NativeAddon;
  } catch (err) {
    throw new Error(
      'mnemo native addon is not built: run `node scripts/build-native.mjs` ' +
        `(expected libs/native-cuda/build/Release/mnemo_native.node): ${(err as Error).message}`,
    );
  }
  const { abi } = addon.version();
  if (abi !== EXPECTED_NATIVE_ABI) {
    throw new Error(`mnemo native addon ABI ${abi} != ${EXPECTED_NATIVE_ABI}: rebuild it (node scripts/build-native.mjs)`);
  }
  addon.init(NativeError, threadCount());
  return addon;
}

let cached: NativeAddon | undefined;

/** The loaded addon (loaded and initialised on first use, once per JS environment). */
export function nativeAddon(): NativeAddon {
  cached ??= load();
  return cached;
}
