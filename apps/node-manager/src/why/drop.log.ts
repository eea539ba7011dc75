import { BoundedRecords } from '@mnemo/service-kit';

/** Why a chunk this node held is gone from one of its tiers. */
export interface ChunkDropRecord {
  readonly reason: 'evicted' | 'expired' | 'corrupt' | 'truncated';
  readonly tier: 'device' | 'host' | 'ssd';
  /** The rule that chose it, in words (e.g. "LRU of the device prefix cache"). */
  readonly policy: string;
  readonly atUnixMs: number;
}

/** The policy behind each tier's ordinary removals (kv-core's eviction orders). */
export const EVICTION_POLICY: Readonly<Record<ChunkDropRecord['tier'], string>> = {
  device: 'LRU of the device prefix cache (NODE_PREFIX_CACHE_BLOCKS, or blocks needed by running requests)',
  host: 'host pool capacity: least recently used first, prefetched copies before others',
  ssd: 'SSD pool capacity: least recently used first',
};

/**
 * Chunk keys this node dropped, with why, bounded by count and age: the node's side of "why was
 * this prompt recomputed". The KV store says which removals were corrupt copies or expired ones
 * just before it reports them; every other removal is its tier's eviction policy at work.
 */
export class DropLog {
  private readonly records: BoundedRecords<string, ChunkDropRecord[]>;
  /** Reasons the store gave for removals it is about to report (key@tier → reason). */
  private readonly told = new Map<string, 'expired' | 'corrupt'>();

  constructor(
    maxKeys: number,
    ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.records = new BoundedRecords(maxKeys, ttlMs, now);
  }

  /** The store is dropping `key` from `tier` for a reason of its own (called before the removal is reported). */
  because(key: string, tier: 'host' | 'ssd', reason: 'expired' | 'corrupt'): void {
    this.told.set(`${key}@${tier}`, reason);
    if (this.told.size > 10_000) this.told.delete(this.told.keys().next().value!);
  }

  /** A removal the node reported (KV events): evicted unless the store said otherwise. */
  removed(key: string, tier: ChunkDropRecord['tier'], truncated = false): void {
    const told = tier === 'device' ? undefined : this.told.get(`${key}@${tier}`);
    if (told) this.told.delete(`${key}@${tier}`);
    // What the store said comes first: a layer that failed its CRC cuts the chunk back to the
    // layers before it (a truncation), and the reason is still the corruption.
    const reason = told ?? (truncated ? 'truncated' : 'evicted');
    const policy =
      reason === 'expired'
        ? 'SSD pool TTL (NODE_KV_SSD_TTL_MS)'
        : reason === 'corrupt'
          ? `CRC32C check failed on read${truncated ? '; the layers before it kept' : ''}`
          : reason === 'truncated'
            ? `${EVICTION_POLICY[tier]}; later layers first`
            : EVICTION_POLICY[tier];
    const list = (this.records.get(key) ?? []).filter((r) => r.tier !== tier);
    this.records.set(key, [...list, { reason, tier, policy, atUnixMs: this.now() }]);
  }

  get(key: string): readonly ChunkDropRecord[] {
    return this.records.get(key) ?? [];
  }
}
