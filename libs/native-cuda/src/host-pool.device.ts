import { nativeAddon, type RawHostPool } from './addon.loader.js';
import type { HostMemoryKind } from './host-buffer.allocator.js';
import { rangeError, typeError, withCallerStack } from './native.error.js';
import { DeviceClosing, registerDevice } from './pool-device.internal.js';

/** The largest host pool region (2^46 bytes, far beyond any machine's memory). */
export const MAX_HOST_POOL_BYTES = 2 ** 46;

export interface HostPoolOptions {
  /** Size of the region in bytes (> 0). */
  bytes: number;
  /**
   * Bind the region's pages to this NUMA node (mbind, before they are touched). Omit for no
   * binding: pages come from the node of the thread that commits them. `numaNodes()` lists
   * the machine's nodes; one pool device per node is the Unified-pooling layout.
   */
  numaNode?: number;
  /** Commit every page at open so the first put takes no page faults (default true). */
  populate?: boolean;
  /** Ask for transparent huge pages (default true): fewer TLB misses on large copies. */
  hugePages?: boolean;
}

/**
 * A host-memory pool device: one native region, sized at open and addressed by byte offset
 * (never exposed to JS as one ArrayBuffer). Name it as an operand of `transfer()`.
 * Its base is 2 MiB aligned, so every 4096-aligned offset can be read from / written to an
 * SSD pool with O_DIRECT without a bounce buffer.
 */
export class HostPoolDevice {
  /** Bytes addressable in the region. */
  readonly bytes: number;
  /** 'pinned' (cudaHostRegister; a CUDA device is present) or 'pageable'. */
  readonly kind: HostMemoryKind;
  /** The NUMA node the pages are bound to, or null when unbound. */
  readonly numaNode: number | null;
  /** Why pinning was attempted and failed (the region stays pageable); null otherwise. */
  readonly pinError: string | null;
  private readonly closing = new DeviceClosing();

  /** @internal use openHostPool() */
  constructor(private readonly raw: RawHostPool) {
    const info = raw.info();
    this.bytes = info.bytes!;
    this.kind = info.kind!;
    this.numaNode = info.numaNode ?? null;
    this.pinError = info.pinError ?? null;
    registerDevice(this, {
      kind: 'host',
      raw,
      name: `host pool (${this.bytes} bytes)`,
      bytes: this.bytes,
      inFlight: this.closing.inFlight,
      isClosed: () => this.closed,
    });
  }

  get closed(): boolean {
    return this.closing.closed;
  }

  /**
   * Refuses new transfers at once (NativeError `closed`), tells V8 the memory is gone, waits
   * for the transfers in flight and resolves once the region is freed. Idempotent.
   */
  close(): Promise<void> {
    return this.closing.close(async (drain) => {
      this.raw.close();
      await drain();
    });
  }
}

/**
 * Opens a host pool device: maps, binds and commits the region on a native thread (a large
 * region takes a while to commit) and resolves with the device.
 * @throws (rejects) TypeError / RangeError for bad options; NativeError `out_of_memory`,
 *   `invalid_argument` (unknown NUMA node), `unsupported` (mbind refused), `closed`.
 */
export function openHostPool(options: HostPoolOptions): Promise<HostPoolDevice> {
  return withCallerStack(async () => {
    if (typeof options !== 'object' || options === null) throw typeError('options must be an object');
    const { bytes, numaNode, populate = true, hugePages = true } = options;
    if (typeof bytes !== 'number') throw typeError(`bytes must be a number, got ${typeof bytes}`);
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_HOST_POOL_BYTES) {
      throw rangeError(`bytes must be an integer in [1, 2^46], got ${bytes}`);
    }
    if (numaNode !== undefined) {
      if (typeof numaNode !== 'number') throw typeError(`numaNode must be a number, got ${typeof numaNode}`);
      if (!Number.isInteger(numaNode) || numaNode < 0 || numaNode > 1023) {
        throw rangeError(`numaNode must be an integer in [0, 1023], got ${numaNode}`);
      }
    }
    if (typeof populate !== 'boolean') throw typeError('populate must be a boolean');
    if (typeof hugePages !== 'boolean') throw typeError('hugePages must be a boolean');
    const raw = await nativeAddon().openHostPool(bytes, numaNode ?? -1, populate, hugePages);
    return new HostPoolDevice(raw);
  });
}

/** NUMA node ids of this machine (from /sys/devices/system/node); [0] on a one-node machine. */
export function numaNodes(): number[] {
  const nodes = nativeAddon().numaNodes();
  return nodes.length > 0 ? nodes : [0];
}
