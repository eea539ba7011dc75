import { compareEvictionOrder, OrderedSet, type EvictionKey } from '@mnemo/kv-core';

/** The tiers a node caches whole chunks in, fastest first. */
export type CacheTier = 'host' | 'ssd';

interface Entry extends EvictionKey {
  readonly key: string;
  readonly id: number;
  tier: CacheTier;
}

/**
 * One node's KV cache at chunk granularity, in DRAM and (optionally) SSD, evicting in kv-core's
 * pool order (compareEvictionOrder: the least recently used request first, its later chunks before
 * its earlier ones). A chunk evicted from DRAM moves to the SSD tier while it has room; evicted
 * from there it is gone. Whole chunks only: every layer of a chunk lives and goes together here.
 */
export class ChunkCache {
  private readonly entries = new Map<string, Entry>();
  private readonly order: Record<CacheTier, OrderedSet<Entry>>;
  private readonly counts: Record<CacheTier, number> = { host: 0, ssd: 0 };
  private nextId = 0;

  constructor(
    readonly hostChunks: number,
    readonly ssdChunks = 0,
  ) {
    if (!(hostChunks >= 0) || !(ssdChunks >= 0)) throw new RangeError('cache capacities must be ≥ 0');
    // Ties (same request, same position: two chains) go to the entry inserted first.
    const cmp = (a: Entry, b: Entry) => compareEvictionOrder(a, b) || a.id - b.id;
    this.order = { host: new OrderedSet(cmp), ssd: new OrderedSet(cmp) };
  }

  /** Chunks held, per tier. */
  get size(): Readonly<Record<CacheTier, number>> {
    return this.counts;
  }

  /** Fraction of DRAM in use. */
  get hostUsage(): number {
    return this.hostChunks > 0 ? this.counts.host / this.hostChunks : 1;
  }

  /** The leading keys held, and each one's tier. */
  prefix(keys: readonly string[]): CacheTier[] {
    const tiers: CacheTier[] = [];
    for (const k of keys) {
      const e = this.entries.get(k);
      if (!e) break;
      tiers.push(e.tier);
    }
    return tiers;
  }

  /**
   * The request's chunks are used at `stamp`: those held are touched (a chunk read from SSD comes
   * back to DRAM, as a restore does), the rest inserted into DRAM, and DRAM overflow is demoted.
   */
  use(keys: readonly string[], stamp: number): void {
    for (let position = 0; position < keys.length; position++) {
      const key = keys[position]!;
      const old = this.entries.get(key);
      if (old) this.remove(old);
      else if (this.hostChunks === 0) continue;
      const e: Entry = { key, id: this.nextId++, stamp, layer: 0, position, tier: 'host' };
      this.entries.set(key, e);
      this.order.host.insert(e);
      this.counts.host++;
    }
    while (this.counts.host > this.hostChunks) this.demote(this.order.host.first()!);
    while (this.counts.ssd > this.ssdChunks) this.remove(this.order.ssd.first()!);
  }

  private demote(e: Entry): void {
    this.order.host.delete(e);
    this.counts.host--;
    if (this.ssdChunks === 0) {
      this.entries.delete(e.key);
      return;
    }
    e.tier = 'ssd';
    this.order.ssd.insert(e);
    this.counts.ssd++;
  }

  private remove(e: Entry): void {
    this.order[e.tier].delete(e);
    this.counts[e.tier]--;
    this.entries.delete(e.key);
  }
}
