import { BufferPool, journalNeedsCompaction, TierLedger, type KvRowGeometry, type ModelKv as LedgerModel } from '@mnemo/kv-core';
import { allocHostBuffer, freeHostBuffer, type SsdPoolDevice } from '@mnemo/native-cuda';
import type { PoolDevice } from './pool.devices.js';
import type { JournalHealth } from '@mnemo/kv-core';
import { SsdJournalFile } from './ssd-journal.file.js';

export type { TierChange, TierCounters } from '@mnemo/kv-core';

/** A model's books in the tiers, journaled to its SSD journal file. */
export type ModelKv = LedgerModel<SsdJournalFile>;

/** The addon's aligned host memory: O_DIRECT reads land in it. */
export const HOST_MEMORY = { alloc: allocHostBuffer, free: freeHostBuffer };

/** What replaying one model's SSD journal found. */
export interface JournalReplay {
  readonly model: string;
  readonly applied: number;
  readonly dropped: number;
  readonly truncatedBytes: number;
}

/**
 * The offload tiers' books (kv-core TierLedger) with what they are books of: the pool devices'
 * memory, the buffers restores reuse, and one SSD journal file per model.
 */
export class OffloadTiers extends TierLedger<PoolDevice, SsdJournalFile> {
  /**
   * FAULT INJECTION ONLY, never for production: restores skip the CRC32C check of the bytes they
   * read, so corrupted KV reaches the engine. Off unless a test sets it (KvStoreSettings
   * `faultSkipRestoreCrc`); it exists so a control test can show what the check prevents.
   */
  faultSkipRestoreCrc = false;
  /** Told of each failed journal flush (logged by the store). */
  onJournalFailure?: (model: string, e: unknown) => void;
  /** Layer payloads and scratch of restores, reused from one restore to the next. */
  readonly buffers = new BufferPool(HOST_MEMORY);

  /**
   * Registers a model; with SSD devices, opens its journal and replays it so the SSD replicas a
   * previous run wrote are found again (warm restart).
   */
  async addModel(model: string, geometry: KvRowGeometry, journalPath?: string): Promise<JournalReplay> {
    const m = this.register(model, geometry);
    if (this.ssd.length === 0 || journalPath === undefined) return { model, applied: 0, dropped: 0, truncatedBytes: 0 };
    const { journal, found } = await SsdJournalFile.open(journalPath, geometry.layers);
    m.journal = journal;
    journal.onFailure = (e) => {
      this.counters.journalWriteFailures++;
      this.onJournalFailure?.(model, e);
    };
    const report = this.replay(m, found.decoded);
    // A replay that dropped puts or cut a torn tail leaves a log worth rewriting once.
    if (report.dropped > 0 || found.truncatedBytes > 0) await journal.compact(m.table);
    return { model, ...report, truncatedBytes: found.truncatedBytes };
  }

  /**
   * Makes what was written durable in the order a restart needs: the SSD data first (fdatasync
   * of every SSD pool), then the journal records naming it — a record never points at bytes
   * that could still be lost.
   */
  async flushJournals(): Promise<void> {
    if (!this.allModels().some((m) => m.journal?.hasPending)) return;
    await Promise.all(this.ssd.map((d) => (d.device as SsdPoolDevice).flush()));
    await Promise.all(this.allModels().map((m) => m.journal?.flush()));
  }

  /** Rewrites a journal as a snapshot once its log has grown well past the live state. */
  async compactJournals(): Promise<void> {
    for (const m of this.allModels()) {
      if (m.journal && journalNeedsCompaction(m.journal.recordsSinceCompaction, m.table.stats('ssd').segments))
        await m.journal.compact(m.table);
    }
  }

  /** Each journaled model's journal health (the node's /healthz and metrics). */
  journalHealth(): Array<{ model: string } & JournalHealth> {
    return this.allModels().flatMap((m) => (m.journal ? [{ model: m.model, ...m.journal.health }] : []));
  }

  async close(): Promise<void> {
    this.buffers.close();
    await Promise.all(this.allModels().map((m) => m.journal?.close()));
  }
}
