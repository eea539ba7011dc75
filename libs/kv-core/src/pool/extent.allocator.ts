import { OrderedSet } from './ordered.set.js';
import type { Extent } from './pool.types.js';

interface FreeExtent {
  offset: number;
  length: number;
}

export interface ExtentAllocatorStats {
  /** Usable bytes (capacity rounded down to the alignment). */
  readonly capacity: number;
  readonly freeBytes: number;
  readonly usedBytes: number;
  readonly largestFree: number;
  readonly freeExtents: number;
  /** `1 − largestFree / freeBytes`: 0 when all free space is one extent (or none is free). */
  readonly fragmentation: number;
}

const bySize = (a: FreeExtent, b: FreeExtent): number => a.length - b.length || a.offset - b.offset;
const byOffset = (a: FreeExtent, b: FreeExtent): number => a.offset - b.offset;

/**
 * Free space of one pool device — a host region addressed by byte offset, or an SSD addressed
 * by sector-aligned byte offset (LBA × sector size) — as a set of free extents.
 *
 * Invariant (checked by {@link ExtentAllocator.checkInvariant}): free extents are aligned,
 * inside `[0, capacity)`, pairwise disjoint and never adjacent (freeing always coalesces with
 * both neighbours), so the free set has one canonical form; the same extents sit in an
 * offset-ordered set (neighbours, containment) and a (length, offset)-ordered set (best fit);
 * `freeBytes` is their sum. Used space is not tracked: callers free part of an earlier
 * allocation (one segment out of a batch's extent), which is why a double free is detected as
 * overlap with free space.
 *
 * Rule: best fit, lowest offset among equals, carved from the extent's start. Best fit
 * leaves the large extents whole for the contiguous batch writes that matter here (one LBA
 * range per offload set, Unified KV pooling §IV-B); with address order on ties it is among
 * the lowest-fragmentation policies measured (Johnstone & Wilson, ISMM '98). All operations
 * are O(log n) in the number of free extents, except {@link fitCount}.
 *
 * Lengths are rounded up to the alignment everywhere, so `free(offset, bytes)` releases what
 * `allocate(bytes)` took. "No space" returns null; a broken invariant (double free, overlap,
 * reserve of used space) throws before anything changes; bad arguments throw RangeError.
 */
export class ExtentAllocator {
  readonly capacity: number;
  private readonly sizes = new OrderedSet<FreeExtent>(bySize);
  private readonly offsets = new OrderedSet<FreeExtent>(byOffset);
  private freeTotal = 0;

  constructor(
    capacity: number,
    readonly alignment: number,
  ) {
    if (!Number.isSafeInteger(alignment) || alignment <= 0) throw new RangeError(`alignment must be a positive integer, got ${alignment}`);
    if (!Number.isSafeInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer, got ${capacity}`);
    this.capacity = capacity - (capacity % alignment);
    if (this.capacity > 0) this.add({ offset: 0, length: this.capacity });
  }

  get freeBytes(): number {
    return this.freeTotal;
  }

  /** Takes `bytes` (rounded up to the alignment) from the best-fitting extent; null if none fits. */
  allocate(bytes: number): number | null {
    const len = this.lengthOf(bytes);
    const ext = this.sizes.ceiling({ length: len, offset: -1 });
    return ext ? this.take(ext, len) : null;
  }

  /**
   * Room for `count` segments of `stride` bytes (a multiple of the alignment): one contiguous
   * extent when one fits (best fit), else several, largest free extents first, each a whole
   * number of strides — so the batch is as few I/Os as the free space allows. Returns the
   * extents in the order to fill them, or null (allocating nothing) if the segments do not fit.
   */
  allocateBatch(count: number, stride: number): Extent[] | null {
    if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
    if (!Number.isSafeInteger(stride) || stride <= 0 || stride % this.alignment !== 0) {
      throw new RangeError(`stride must be a positive multiple of ${this.alignment}, got ${stride}`);
    }
    if (count === 0) return [];
    const total = count * stride;
    if (!Number.isSafeInteger(total)) throw new RangeError(`batch of ${count} × ${stride} bytes overflows`);
    const whole = this.sizes.ceiling({ length: total, offset: -1 });
    if (whole) return [{ offset: this.take(whole, total), length: total }];
    const plan: FreeExtent[] = [];
    let fits = 0;
    for (let ext = this.sizes.last(); ext && fits < count; ext = this.sizes.lower(ext)) {
      const k = Math.floor(ext.length / stride);
      if (k === 0) break;
      plan.push(ext);
      fits += k;
    }
    if (fits < count) return null;
    let remaining = count;
    return plan.map((ext) => {
      const k = Math.min(remaining, Math.floor(ext.length / stride));
      remaining -= k;
      return { offset: this.take(ext, k * stride), length: k * stride };
    });
  }

  /** Returns `[offset, offset + bytes)` (rounded up) to free space, coalescing with neighbours. */
  free(offset: number, bytes: number): void {
    const len = this.checkRange(offset, bytes);
    const end = offset + len;
    const prev = this.offsets.floor({ offset, length: 0 });
    if (prev && prev.offset + prev.length > offset)
      throw new Error(`double free: [${offset}, ${end}) overlaps free space at ${prev.offset}`);
    const next = this.offsets.higher({ offset, length: 0 });
    if (next && next.offset < end) throw new Error(`double free: [${offset}, ${end}) overlaps free space at ${next.offset}`);
    const joinPrev = prev !== undefined && prev.offset + prev.length === offset;
    const joinNext = next !== undefined && next.offset === end;
    const absorbed = joinNext ? next.length : 0;
    if (joinNext) this.remove(next);
    if (joinPrev) {
      // prev keeps its offset, so only its place by size changes.
      this.sizes.delete(prev);
      prev.length += len + absorbed;
      this.sizes.insert(prev);
      this.freeTotal += len + absorbed;
    } else {
      this.add({ offset, length: len + absorbed });
    }
  }

  /** Marks `[offset, offset + bytes)` used (journal replay); it must lie inside one free extent. */
  reserve(offset: number, bytes: number): void {
    const len = this.checkRange(offset, bytes);
    const ext = this.containing(offset, len);
    if (!ext) throw new Error(`reserve of [${offset}, ${offset + len}) overlaps used space`);
    const tail = ext.offset + ext.length - (offset + len);
    this.remove(ext);
    if (offset > ext.offset) this.add({ offset: ext.offset, length: offset - ext.offset });
    if (tail > 0) this.add({ offset: offset + len, length: tail });
  }

  /** Whether `[offset, offset + bytes)` (rounded up) is entirely free; false outside the device. */
  isFree(offset: number, bytes: number): boolean {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % this.alignment !== 0) return false;
    const len = this.lengthOf(bytes);
    return offset + len <= this.capacity && this.containing(offset, len) !== undefined;
  }

  /** Exact number of `stride`-byte segments the free space holds. O(free extents): not for hot paths. */
  fitCount(stride: number): number {
    if (!Number.isSafeInteger(stride) || stride <= 0) throw new RangeError(`stride must be a positive integer, got ${stride}`);
    let n = 0;
    for (let ext = this.sizes.last(); ext && ext.length >= stride; ext = this.sizes.lower(ext)) n += Math.floor(ext.length / stride);
    return n;
  }

  stats(): ExtentAllocatorStats {
    const largestFree = this.sizes.last()?.length ?? 0;
    return {
      capacity: this.capacity,
      freeBytes: this.freeTotal,
      usedBytes: this.capacity - this.freeTotal,
      largestFree,
      freeExtents: this.sizes.size,
      fragmentation: this.freeTotal === 0 ? 0 : 1 - largestFree / this.freeTotal,
    };
  }

  /** Free extents in offset order (a copy). O(n). */
  freeExtents(): Extent[] {
    return [...this.offsets].map((e) => ({ offset: e.offset, length: e.length }));
  }

  checkInvariant(): void {
    this.sizes.checkInvariant();
    this.offsets.checkInvariant();
    if (this.sizes.size !== this.offsets.size) throw new Error('extent sets disagree in size');
    let sum = 0;
    let prevEnd = -1;
    for (const e of this.offsets) {
      if (e.length <= 0 || e.offset % this.alignment !== 0 || e.length % this.alignment !== 0)
        throw new Error(`bad free extent ${e.offset}+${e.length}`);
      if (e.offset <= prevEnd) throw new Error(`free extents at ${e.offset} overlap or were not coalesced`);
      if (e.offset + e.length > this.capacity) throw new Error(`free extent ${e.offset}+${e.length} beyond capacity`);
      if (!this.sizes.has(e)) throw new Error(`free extent ${e.offset} missing from the size index`);
      prevEnd = e.offset + e.length;
      sum += e.length;
    }
    if (sum !== this.freeTotal) throw new Error(`free bytes ${this.freeTotal} ≠ sum of extents ${sum}`);
  }

  private lengthOf(bytes: number): number {
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new RangeError(`bytes must be a positive integer, got ${bytes}`);
    return Math.ceil(bytes / this.alignment) * this.alignment;
  }

  private checkRange(offset: number, bytes: number): number {
    const len = this.lengthOf(bytes);
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % this.alignment !== 0) {
      throw new RangeError(`offset must be a non-negative multiple of ${this.alignment}, got ${offset}`);
    }
    if (offset + len > this.capacity) throw new RangeError(`[${offset}, ${offset + len}) is beyond capacity ${this.capacity}`);
    return len;
  }

  private containing(offset: number, len: number): FreeExtent | undefined {
    const ext = this.offsets.floor({ offset, length: 0 });
    return ext && ext.offset + ext.length >= offset + len ? ext : undefined;
  }

  private take(ext: FreeExtent, len: number): number {
    const at = ext.offset;
    this.remove(ext);
    if (ext.length > len) this.add({ offset: at + len, length: ext.length - len });
    return at;
  }

  private add(ext: FreeExtent): void {
    this.sizes.insert(ext);
    this.offsets.insert(ext);
    this.freeTotal += ext.length;
  }

  private remove(ext: FreeExtent): void {
    this.sizes.delete(ext);
    this.offsets.delete(ext);
    this.freeTotal -= ext.length;
  }
}
