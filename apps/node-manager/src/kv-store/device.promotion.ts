import type { Engine, StagingStats } from '@mnemo/engine';
import type { PrefetchAdvisory } from '@mnemo/kv-core';
import type { ChunkPayload } from './tier.writer.js';
import type { StoreLog } from './store.log.js';

/**
 * Symphony's promotion of prefetched chunks to the device (docs/symphony-node.md §5): each chunk
 * an advisory pulls is also placed in free device blocks, so its request finds a device hit. The
 * engine never evicts for it; a chunk that does not fit stays in the host pool only.
 */
export class DevicePromotion {
  /** NODE_PREFETCH_PROMOTE. */
  enabled = true;

  constructor(
    private readonly engine: Engine,
    private readonly log: StoreLog,
  ) {}

  /** Places a pulled chunk on the device; false when it was not (off, no staging, no free room, or refused). */
  promote(model: string, c: ChunkPayload, advisory: PrefetchAdvisory, stamp: number): boolean {
    const staging = this.engine.staging;
    if (!this.enabled || !staging) return false;
    try {
      return staging.stage(model, c.key, c.payload, {
        priority: advisory.priority ?? 0,
        dueMs: advisory.dueMs ?? Infinity,
        stamp,
        position: c.position,
      });
    } catch (e) {
      this.log('warn', 'prefetched chunk not promoted to the device', { model, key: c.key, err: e instanceof Error ? e : String(e) });
      return false;
    }
  }

  /** Drops device copies no advisory wants any more. */
  unstage(chunks: ReadonlyArray<{ readonly model: string; readonly key: string }>): void {
    for (const u of chunks) this.engine.staging?.unstage(u.model, u.key);
  }

  /** Over every model, since start (and staged now). */
  stats(): StagingStats {
    const total = { staged: 0, adopted: 0, purged: 0, unstaged: 0, chunks: 0 };
    const staging = this.engine.staging;
    if (!staging) return total;
    for (const m of this.engine.models()) {
      const s = staging.stats(m.id);
      for (const k of Object.keys(total) as Array<keyof StagingStats>) total[k] += s[k];
    }
    return total;
  }
}
