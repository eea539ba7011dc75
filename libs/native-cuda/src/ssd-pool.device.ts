import { nativeAddon, type RawSsdPool, type SsdPoolStats } from './addon.loader.js';
import { closedError, rangeError, typeError, ValidationCode, withCallerStack } from './native.error.js';
import { DeviceClosing, registerDevice } from './pool-device.internal.js';

export type IoBackend = 'io_uring' | 'pread';

export interface SsdPoolOptions {
  /** A raw block device or a file. A missing file is created (needs `bytes`). */
  path: string;
  /**
   * Create the file with this size (fallocate: real blocks, never sparse) or grow an existing
   * one to it; never shrinks. Omit to open an existing file or device as it is.
   */
  bytes?: number;
  /**
   * Alignment of every offset and length (LBA extent unit). Default: what the device needs
   * (BLKSSZGET, or statx's direct-I/O alignment for files). A larger power of two that is a
   * multiple of it may be forced, e.g. 4096 for a layout that must move between devices.
   */
  blockSize?: number;
  /** Requests in flight at most (io_uring); default 64, in [1, 4096]. */
  queueDepth?: number;
  /** Largest single request; adjacent segments are merged up to it. Default 1 MiB, in [4096, 64 MiB]. */
  maxRequestBytes?: number;
  /** 'auto' (default): io_uring, else pread with the reason in `backendReason`. 'pread' forces the fallback. */
  backend?: 'auto' | 'pread';
}

/**
 * An SSD pool device: a raw block device or one preallocated file opened with O_DIRECT,
 * addressed by byte offsets that are multiples of `blockSize`. One native worker thread per
 * device submits and reaps all of its I/O (io_uring, or pread/pwrite when io_uring is not
 * available: the store must log `backend` and `backendReason` at start-up). Name it as an
 * operand of `transfer()`.
 */
export class SsdPoolDevice {
  readonly path: string;
  /** Usable bytes: [0, bytes), a multiple of blockSize. */
  readonly bytes: number;
  readonly blockSize: number;
  /** Memory aligned to this is read/written in place; other memory goes through a staging buffer. */
  readonly memoryAlignment: number;
  readonly maxRequestBytes: number;
  readonly queueDepth: number;
  readonly backend: IoBackend;
  /** Why the backend is pread (not compiled in, refused by the kernel, or forced); null for io_uring. */
  readonly backendReason: string | null;
  readonly blockDevice: boolean;
  /** Whether this open created the file (false: an existing pool was reopened as it was). */
  readonly created: boolean;
  private readonly closing = new DeviceClosing();

  /** @internal use openSsdPool() */
  constructor(private readonly raw: RawSsdPool) {
    const info = raw.info();
    this.path = info.path!;
    this.bytes = info.bytes!;
    this.blockSize = info.blockSize!;
    this.memoryAlignment = info.memoryAlignment!;
    this.maxRequestBytes = info.maxRequestBytes!;
    this.queueDepth = info.queueDepth!;
    this.backend = info.backend!;
    this.backendReason = info.backendReason ?? null;
    this.blockDevice = info.blockDevice!;
    this.created = info.created!;
    registerDevice(this, {
      kind: 'ssd',
      raw,
      name: `SSD pool ${this.path}`,
      bytes: this.bytes,
      blockSize: this.blockSize,
      inFlight: this.closing.inFlight,
      isClosed: () => this.closed,
    });
  }

  get closed(): boolean {
    return this.closing.closed;
  }

  /** Live counters; `inFlight` is the queue depth in flight now (a gauge for metrics). */
  stats(): SsdPoolStats {
    return this.raw.stats();
  }

  /** Makes every write that completed before this call durable (fdatasync, after earlier I/O). */
  flush(): Promise<void> {
    return withCallerStack(async () => {
      if (this.closed) throw closedError(`SSD pool ${this.path}`);
      await this.closing.inFlight.track(this.raw.flush());
    });
  }

  /**
   * Refuses new work at once (NativeError `closed`), lets the I/O already accepted finish,
   * joins the device's worker and closes the file. Idempotent.
   */
  close(): Promise<void> {
    return this.closing.close(async (drain) => {
      this.raw.beginClose();
      await drain();
      this.raw.close();
    });
  }
}

function optionalInteger(name: string, v: unknown, lo: number, hi: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') throw typeError(`${name} must be a number, got ${typeof v}`);
  if (!Number.isInteger(v) || v < lo || v > hi) throw rangeError(`${name} must be an integer in [${lo}, ${hi}], got ${v}`);
  return v;
}

/**
 * Opens (creating or reopening) an SSD pool device; the file work (fallocate, fsync) runs on
 * a native thread.
 * @throws (rejects) TypeError / RangeError for bad options; NativeError `not_found` (missing
 *   file without `bytes`), `unsupported` (no O_DIRECT there), `io_error`, `out_of_memory`
 *   (no space), `invalid_argument` (not a file or block device, bad block size), `closed`.
 */
export function openSsdPool(options: SsdPoolOptions): Promise<SsdPoolDevice> {
  return withCallerStack(async () => {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object');
    const { path, backend = 'auto' } = options;
    if (typeof path !== 'string') throw typeError(`path must be a string, got ${typeof path}`);
    if (path.length === 0 || path.includes('\0'))
      throw rangeError('path must be a non-empty string without NUL', ValidationCode.InvalidArgValue);
    const bytes = optionalInteger('bytes', options.bytes, 1, Number.MAX_SAFE_INTEGER) ?? 0;
    const blockSize = optionalInteger('blockSize', options.blockSize, 512, 2 ** 20) ?? 0;
    if (blockSize !== 0 && (blockSize & (blockSize - 1)) !== 0) {
      throw rangeError(`blockSize must be a power of two, got ${blockSize}`, ValidationCode.InvalidArgValue);
    }
    const queueDepth = optionalInteger('queueDepth', options.queueDepth, 1, 4096) ?? 64;
    const maxRequestBytes = optionalInteger('maxRequestBytes', options.maxRequestBytes, 4096, 64 * 2 ** 20) ?? 2 ** 20;
    if (backend !== 'auto' && backend !== 'pread') {
      throw rangeError(`backend must be 'auto' or 'pread', got ${String(backend)}`, ValidationCode.InvalidArgValue);
    }
    const raw = await nativeAddon().openSsdPool(path, bytes, blockSize, queueDepth, maxRequestBytes, backend === 'pread');
    return new SsdPoolDevice(raw);
  });
}
