import type { ExtentAllocator } from './extent.allocator.js';
import { placeSegments } from './placement.policy.js';
import type { Extent, PoolTier } from './pool.types.js';

/** A pool device of one tier, with its measured bandwidth and its free-space allocator. */
export interface OffloadDevice {
  readonly deviceIndex: number;
  readonly type: PoolTier;
  readonly bandwidth: number;
  readonly allocator: ExtentAllocator;
}

/** What to write to one device: its offload set and where each segment goes. */
export interface DeviceWrite<S> {
  readonly deviceIndex: number;
  readonly type: PoolTier;
  /** The device's offload set in write order (layer-wise, as enumerated). */
  readonly segments: S[];
  /** Byte offset of each segment, parallel to `segments`. */
  readonly offsets: number[];
  /** The extents taken; segments fill them in order, one stride apart. One extent = one I/O. */
  readonly extents: Extent[];
}

export interface OffloadPlan<S> {
  /** One per device that got segments. */
  readonly writes: DeviceWrite<S>[];
  /** Segments no device had room for (the latest layers): evict and re-plan, or skip them. */
  readonly unplaced: S[];
}

/**
 * Plans one offload batch onto one tier's devices (Unified KV pooling Algorithm 1 up to the
 * writes): bandwidth-proportional, layer-interleaved placement (see placeSegments), then one
 * contiguous extent per device where free space allows (§IV-B: one LBA range per offload set),
 * several whole-stride extents where it is fragmented.
 *
 * Rooms are first estimated as `freeBytes / stride`, which fragmentation can overstate; if a
 * device then cannot hold its share, everything taken in that round is given back, that
 * device's room is counted exactly (O(free extents), only on this path) and the batch is
 * placed again — at most one extra round per device. The space in the returned plan is
 * allocated: free it if the writes fail. `stride` must be a multiple of every device's
 * alignment (see segmentStride); otherwise RangeError before anything is allocated.
 */
export function planOffload<S extends { readonly position: number }>(
  segments: readonly S[],
  devices: readonly OffloadDevice[],
  stride: number,
): OffloadPlan<S> {
  if (!Number.isSafeInteger(stride) || stride <= 0) throw new RangeError(`stride must be a positive integer, got ${stride}`);
  const seen = new Set<number>();
  for (const d of devices) {
    if (stride % d.allocator.alignment !== 0)
      throw new RangeError(`stride ${stride} is not a multiple of device ${d.deviceIndex}'s alignment ${d.allocator.alignment}`);
    if (seen.has(d.deviceIndex)) throw new RangeError(`device ${d.deviceIndex} listed twice`);
    seen.add(d.deviceIndex);
  }
  const rooms = devices.map((d) => Math.floor(d.allocator.freeBytes / stride));
  for (;;) {
    const placement = placeSegments(
      segments,
      devices.map((d, i) => ({ bandwidth: d.bandwidth, room: rooms[i]! })),
    );
    const taken: Array<Extent[] | null> = devices.map(() => null);
    const failed = devices.findIndex((d, i) => {
      if (placement.counts[i] === 0) return false;
      taken[i] = d.allocator.allocateBatch(placement.counts[i]!, stride);
      return taken[i] === null;
    });
    if (failed < 0) {
      const writes = devices.flatMap((d, i) => (taken[i] ? [write(d, placement.sets[i]!, taken[i]!, stride)] : []));
      return { writes, unplaced: placement.unplaced };
    }
    taken.forEach((exts, i) => exts?.forEach((e) => devices[i]!.allocator.free(e.offset, e.length)));
    rooms[failed] = devices[failed]!.allocator.fitCount(stride);
  }
}

function write<S>(d: OffloadDevice, segments: S[], extents: Extent[], stride: number): DeviceWrite<S> {
  const offsets: number[] = [];
  for (const e of extents) for (let at = e.offset; at < e.offset + e.length; at += stride) offsets.push(at);
  return { deviceIndex: d.deviceIndex, type: d.type, segments, offsets, extents };
}
