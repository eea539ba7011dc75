import { type MemcpyProbeTimes, nativeAddon } from './addon.loader.js';
import { rangeError, typeError, ValidationCode, withCallerStack } from './native.error.js';
import type { IoBackend } from './ssd-pool.device.js';

export interface IoInfo {
  /** liburing was found when the addon was built. */
  uringCompiled: boolean;
  /** io_uring_queue_init works in this process (kernel, seccomp, sysctl allow it). */
  uringAvailable: boolean;
  /** Why not, when it does not; null otherwise. SSD pools then use pread/pwrite. */
  uringReason: string | null;
  /** The CRC32C implementation in use (picked at load): 'vpclmulqdq', 'sse4.2', 'armv8-crc' or 'software'. */
  crc32c: string;
  /** The copy kernel transfers use: 'avx2' or 'memcpy'. */
  copyKernel: string;
}

/** What the I/O path will be on this machine: for the store's start-up log line. */
export function ioInfo(): IoInfo {
  return nativeAddon().ioInfo();
}

export interface MemcpyProbeResult extends MemcpyProbeTimes {
  /** The limit: bytes over the faster kernel's median time. */
  medianBytesPerSecond: number;
}

export interface DirectIoProbeOptions {
  /** A scratch file or device: a write probe overwrites [0, bytes). */
  path: string;
  bytes: number;
  /** One request per block; a multiple of the device's block size. Default 1 MiB. */
  blockBytes?: number;
  /** Default 32. */
  queueDepth?: number;
  mode: 'read' | 'write';
  backend?: 'auto' | 'pread';
}

export interface DirectIoProbeResult {
  bytes: number;
  seconds: number;
  bytesPerSecond: number;
  backend: IoBackend;
  backendReason: string | null;
  queueDepth: number;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function integer(name: string, v: unknown, lo: number, hi: number): number {
  if (typeof v !== 'number') throw typeError(`${name} must be a number, got ${typeof v}`);
  if (!Number.isInteger(v) || v < lo || v > hi) throw rangeError(`${name} must be an integer in [${lo}, ${hi}], got ${v}`);
  return v;
}

/** How a memcpy probe copies, to match the tier it bounds (default: one copy of all the bytes). */
export interface MemcpyProbeShape {
  /**
   * Copy the bytes as consecutive pieces of this size, each split over the copy threads and
   * finished before the next starts (a restore's one transfer per layer). Must divide `bytes`.
   */
  pieceBytes?: number;
  /** Land the pieces in this many piece-sized buffers in turn (a restore's reused layer payloads). */
  dstRingPieces?: number;
}

/**
 * Copy bandwidth between two committed, huge-page-backed host buffers of `bytes`, split
 * across the copy threads the way transfers are, with glibc memcpy and with the transfers'
 * own kernel: the faster median is the host tiers' physical limit.
 */
export function probeMemcpy(bytes: number, iterations = 5, shape: MemcpyProbeShape = {}): Promise<MemcpyProbeResult> {
  return withCallerStack(async () => {
    integer('bytes', bytes, 1, 2 ** 40);
    integer('iterations', iterations, 1, 1000);
    const pieceBytes = integer('pieceBytes', shape.pieceBytes ?? 0, 0, bytes);
    const ring = integer('dstRingPieces', shape.dstRingPieces ?? 0, 0, 2 ** 20);
    if (pieceBytes > 0 && bytes % pieceBytes !== 0) throw rangeError('pieceBytes must divide bytes', ValidationCode.InvalidArgValue);
    if (ring > (pieceBytes > 0 ? bytes / pieceBytes : 1))
      throw rangeError('dstRingPieces exceeds the pieces copied', ValidationCode.InvalidArgValue);
    const r = await nativeAddon().probeMemcpy(bytes, iterations, pieceBytes, ring);
    return { ...r, medianBytesPerSecond: r.bytes / Math.min(median(r.memcpySeconds), median(r.kernelSeconds)) };
  });
}

/**
 * Raw sequential O_DIRECT throughput on `path` through the SSD pool path (same worker, same
 * backend), one `blockBytes` request at a time up to `queueDepth` in flight: the SSD tier's
 * physical limit. NOTE: read probes need blocks that were written (run a write probe on the
 * same path first): fallocated but unwritten extents read as zeros without device I/O.
 */
export function probeDirectIo(options: DirectIoProbeOptions): Promise<DirectIoProbeResult> {
  return withCallerStack(async () => {
    const { path, mode, backend = 'auto' } = options;
    if (typeof path !== 'string' || path.length === 0) throw typeError('path must be a non-empty string');
    const bytes = integer('bytes', options.bytes, 1, 2 ** 50);
    const blockBytes = integer('blockBytes', options.blockBytes ?? 2 ** 20, 512, 64 * 2 ** 20);
    const queueDepth = integer('queueDepth', options.queueDepth ?? 32, 1, 4096);
    if (mode !== 'read' && mode !== 'write') throw rangeError(`mode must be 'read' or 'write'`, ValidationCode.InvalidArgValue);
    if (backend !== 'auto' && backend !== 'pread') throw rangeError(`backend must be 'auto' or 'pread'`, ValidationCode.InvalidArgValue);
    if (bytes % blockBytes !== 0) throw rangeError('bytes must be a multiple of blockBytes', ValidationCode.InvalidArgValue);
    const r = await nativeAddon().probeDirectIo(path, bytes, blockBytes, queueDepth, mode === 'write', backend === 'pread');
    return { ...r, bytesPerSecond: r.bytes / r.seconds };
  });
}

/**
 * Writes back and drops `path`'s pages from the page cache (fdatasync, then
 * POSIX_FADV_DONTNEED), so its next buffered read comes from the device: the cold
 * file-per-chunk baseline.
 */
export function dropPageCache(path: string): Promise<void> {
  return withCallerStack(async () => {
    if (typeof path !== 'string' || path.length === 0) throw typeError('path must be a non-empty string');
    await nativeAddon().dropPageCache(path);
  });
}
