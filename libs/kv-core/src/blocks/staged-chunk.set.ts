import { comparePrefetchPurge, PurgeQueue, type PrefetchUrgency } from '../pool/eviction.order.js';

/**
 * How much a staged chunk is wanted: its advisory's urgency, when it was prefetched (`stamp`,
 * ms) and its index in the prompt's key chain (`position`). Purged in kv-core's prefetch order.
 */
export interface StageRank extends PrefetchUrgency {
  readonly stamp: number;
  readonly position: number;
}

interface StagedItem extends StageRank {
  readonly key: string;
  readonly ids: readonly number[];
  /** Every layer of a block sits in that block: the device drops a staged chunk whole. */
  readonly layer: 0;
  readonly bytes: number;
}

/**
 * Device blocks holding prefetched chunks no sequence uses yet (Symphony §3.4 cooperative memory),
 * by chunk key, with their purge order: lowest advisory priority, the request due last, least
 * recently prefetched, later chunks first ({@link comparePrefetchPurge}). O(log n) per add,
 * remove and victim; a block belongs to at most one staged chunk.
 */
export class StagedChunkSet {
  private readonly byKey = new Map<string, StagedItem>();
  private readonly queue = new PurgeQueue<StagedItem>(comparePrefetchPurge);
  private blockCount = 0;

  /** Blocks the staged chunks hold. */
  get blocks(): number {
    return this.blockCount;
  }

  get size(): number {
    return this.byKey.size;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  ids(key: string): readonly number[] | undefined {
    return this.byKey.get(key)?.ids;
  }

  add(key: string, ids: readonly number[], rank: StageRank): void {
    if (this.byKey.has(key)) throw new Error(`chunk ${key} is already staged`);
    const item: StagedItem = {
      priority: rank.priority,
      dueMs: rank.dueMs,
      stamp: rank.stamp,
      position: rank.position,
      key,
      ids,
      layer: 0,
      bytes: ids.length,
    };
    this.queue.add(item);
    this.byKey.set(key, item);
    this.blockCount += ids.length;
  }

  /** Takes the chunk out of the set; its blocks, or undefined when it was not staged. */
  remove(key: string): readonly number[] | undefined {
    const item = this.byKey.get(key);
    if (!item) return undefined;
    this.queue.remove(item);
    this.byKey.delete(key);
    this.blockCount -= item.ids.length;
    return item.ids;
  }

  /** The first chunk in purge order, if any. */
  victim(): string | undefined {
    return this.queue.choose(1)[0]?.key;
  }

  /** Every staged block id (checks, not the hot path). */
  allIds(): Set<number> {
    const out = new Set<number>();
    for (const it of this.byKey.values()) for (const id of it.ids) out.add(id);
    return out;
  }

  /** Keys of the staged chunks holding an id in [from, to). */
  keysIn(from: number, to: number): string[] {
    const out: string[] = [];
    for (const [key, it] of this.byKey) if (it.ids.some((id) => id >= from && id < to)) out.push(key);
    return out;
  }
}
