import { BlockLruList } from './block-lru.list.js';
import { checkDeviceBlockState } from './device-block.invariant.js';
import { FreeBlockStack } from './free-block.stack.js';
import { GroupedFreeIds } from './grouped-free.ids.js';
import { StagedChunkSet } from './staged-chunk.set.js';
import type { BlockEvictionListener, BlockGroupOptions, DeviceBlockCounts, StagedPurgeListener } from './device-block.types.js';

/**
 * The state of every block id of a `DeviceBlockManager` (free, cached, staged or active; see
 * there for what each means) and the O(1) bookkeeping that keeps the structures in step: reads,
 * lookups by key, growth at the end of the id space and the invariant check. The manager holds
 * the operations that move blocks between states.
 */
export abstract class DeviceBlockStates {
  protected readonly refs: number[] = [];
  protected readonly keys: Array<string | undefined> = [];
  protected readonly byKey = new Map<string, number>();
  protected readonly free = new FreeBlockStack();
  protected readonly lru = new BlockLruList();
  protected readonly staged = new StagedChunkSet();
  /** Grouped mode only: free ids no group reserves, and the groups (their tails are the other free ids). */
  protected readonly grouping?: GroupedFreeIds;

  constructor(
    capacity: number,
    protected readonly onEvict?: BlockEvictionListener,
    grouping?: BlockGroupOptions,
    protected readonly onPurgeStaged?: StagedPurgeListener,
  ) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer, got ${capacity}`);
    if (grouping) this.grouping = new GroupedFreeIds(grouping.groupBlocks);
    this.grow(capacity);
  }

  /** Whether allocations come in block groups (`DeviceBlockManager.allocateFor`). */
  get grouped(): boolean {
    return this.grouping !== undefined;
  }

  get capacity(): number {
    return this.refs.length;
  }

  get numFree(): number {
    return this.free.size;
  }

  get numCached(): number {
    return this.lru.size;
  }

  get numStaged(): number {
    return this.staged.blocks;
  }

  /** Prefetched chunks staged on the device. */
  get stagedChunks(): number {
    return this.staged.size;
  }

  get numActive(): number {
    return this.refs.length - this.free.size - this.lru.size - this.staged.blocks;
  }

  /** Blocks {@link allocate} can hand out now: free plus reclaimable staged and cached ones. */
  get numAvailable(): number {
    return this.free.size + this.lru.size + this.staged.blocks;
  }

  counts(): DeviceBlockCounts {
    return { capacity: this.capacity, free: this.numFree, cached: this.numCached, staged: this.numStaged, active: this.numActive };
  }

  refCount(id: number): number {
    this.assertKnown(id);
    return this.refs[id]!;
  }

  keyOf(id: number): string | undefined {
    this.assertKnown(id);
    return this.keys[id];
  }

  /** The block holding `key`'s content, if the device still has it (cached or active). */
  find(key: string): number | undefined {
    return this.byKey.get(key);
  }

  /**
   * Blocks of the longest prefix of `keys` present on the device, in order. Takes no
   * reference: call {@link acquire} before anything else can allocate.
   */
  match(keys: readonly string[]): number[] {
    const out: number[] = [];
    for (const key of keys) {
      const id = this.byKey.get(key);
      if (id === undefined) break;
      out.push(id);
    }
    return out;
  }

  /** Adds `n` free blocks with the next ids (the device cache grew by whole blocks at its end). */
  grow(n: number): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`grow count must be a non-negative integer, got ${n}`);
    const first = this.refs.length;
    this.refs.length = this.keys.length = first + n;
    this.refs.fill(0, first);
    this.lru.grow(first + n);
    this.free.grow(first + n);
    // High ids first so a fresh manager hands out 0, 1, 2, … in order.
    for (let id = first + n - 1; id >= first; id--) this.free.push(id);
    this.grouping?.grow(first, first + n);
  }

  /** Verifies every invariant in O(capacity); for tests and debug checks, not the hot path. */
  checkInvariant(): void {
    const cap = this.refs.length;
    checkDeviceBlockState({
      refs: this.refs,
      keys: this.keys,
      byKey: this.byKey,
      free: this.free.ids(cap),
      cached: this.lru.ids(cap),
      staged: this.staged.allIds(),
      stagedBlocks: this.staged.blocks,
      ...(this.grouping ? { freeRanges: this.grouping.ranges() } : {}),
    });
  }

  protected pushFree(id: number): void {
    this.free.push(id);
    this.grouping?.free(id, id + 1);
  }

  protected dropKey(id: number): string {
    const key = this.keys[id]!;
    this.keys[id] = undefined;
    this.byKey.delete(key);
    return key;
  }

  protected assertKnown(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.refs.length) throw new RangeError(`unknown block id ${id}`);
  }
}
