import { open, rename, type FileHandle } from 'node:fs/promises';
import {
  compactJournal,
  decodeJournal,
  emptyJournal,
  encodeRecords,
  journalReplayable,
  JournalBacklog,
  type DecodedJournal,
  type JournalHealth,
  type JournalRecord,
  type LookupTable,
} from '@mnemo/kv-core';

/** What opening a journal found on disk. */
export interface JournalOpenResult {
  readonly decoded: DecodedJournal;
  /** Bytes dropped from a torn or corrupt tail (0 when the file ended cleanly). */
  readonly truncatedBytes: number;
}

/** The journal's writes, a port so a test can fail one part-way the way a full disk does. */
export interface JournalIo {
  /** Appends all of `bytes` at the end of the file (or throws, having written any part of it). */
  append(fh: FileHandle, bytes: Uint8Array): Promise<void>;
}

export const FILE_JOURNAL_IO: JournalIo = {
  async append(fh, bytes) {
    for (let off = 0; off < bytes.length;) off += (await fh.write(bytes, off, bytes.length - off)).bytesWritten;
  },
};

/**
 * The SSD pool's lookup table, journaled to one append-only file per model (format: kv-core
 * `journal.codec.ts`). Appends are buffered and written with one `write` + `fdatasync` per
 * flush (group commit), so a put record is durable a few milliseconds after its data landed on
 * the SSD; a crash in between loses the record, and the space it named is simply free again
 * after replay. A torn or corrupt tail found at open is cut off before anything is appended.
 *
 * A failed write or sync loses nothing it was given: the records stay queued, the file is cut
 * back to the end of the last record that was synced (a partial write must not sit in front of
 * later records, where replay would stop at it), the journal reports itself `failing`, and the
 * same records are written again after a backoff (and with every later flush) until it works.
 * Only records queued when a flush was asked for go with it and its retries: the caller synced
 * the data they name first, and a record never reaches the disk before its data. Which records
 * go, and the backoff, are kv-core's {@link JournalBacklog}; this class does the file's I/O.
 */
export class SsdJournalFile {
  private readonly backlog = new JournalBacklog();
  private flushing: Promise<void> = Promise.resolve();
  /** File size up to the last synced record: where a failed write is cut back to. */
  private goodBytes = 0;
  /** A cut back after a failure did not work either: nothing is appended until it does. */
  private cutPending = false;
  private retryTimer?: NodeJS.Timeout;
  private closed = false;
  /** Told of every failed flush (the node logs it once and counts it). */
  onFailure?: (e: unknown) => void;

  private constructor(
    readonly path: string,
    private fh: FileHandle,
    private readonly io: JournalIo,
  ) {}

  /** Opens (creating with a header when missing or unreadable) and decodes what is there. */
  static async open(
    path: string,
    numLayers: number,
    io: JournalIo = FILE_JOURNAL_IO,
  ): Promise<{ journal: SsdJournalFile; found: JournalOpenResult }> {
    const fh = await open(path, 'a+');
    try {
      const bytes = new Uint8Array(await fh.readFile());
      const decoded = decodeJournal(bytes);
      const journal = new SsdJournalFile(path, fh, io);
      if (!journalReplayable(decoded, numLayers)) {
        await journal.rewrite(emptyJournal(numLayers, Date.now()));
        return { journal, found: { decoded: { ...decoded, records: [] }, truncatedBytes: bytes.length } };
      }
      const truncatedBytes = bytes.length - decoded.validBytes;
      if (truncatedBytes > 0) {
        await fh.truncate(decoded.validBytes);
        await fh.datasync();
      }
      journal.goodBytes = decoded.validBytes;
      return { journal, found: { decoded, truncatedBytes } };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Records appended since open (a compaction resets the count). */
  get recordsSinceCompaction(): number {
    return this.backlog.written;
  }

  /** Records queued and not yet written. */
  get hasPending(): boolean {
    return this.backlog.hasPending;
  }

  get health(): JournalHealth {
    return this.backlog.health;
  }

  /** Queues records; they reach the disk with the next flush. Ignored once closed. */
  append(records: readonly JournalRecord[]): void {
    if (!this.closed) this.backlog.add(records);
  }

  /**
   * Writes and syncs everything queued so far; flushes run one after another. Rejects when the
   * write or sync fails: the records stay queued and are retried (see the class comment).
   */
  flush(): Promise<void> {
    this.backlog.cover();
    return this.chain(() => this.writeCovered());
  }

  /** Replaces the log by a snapshot of the table's SSD entries (temp file, fsync, rename). */
  compact(table: LookupTable): Promise<void> {
    this.backlog.cover();
    return this.chain(async () => {
      await this.writeCovered();
      if (this.closed) return;
      await this.rewrite(compactJournal(table, Date.now()));
      this.backlog.written = 0;
    });
  }

  /** Flushes what is queued (a failure is reported, not thrown: the node is going away) and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush().catch(() => undefined);
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.flushing;
    await this.fh.close();
  }

  /** Runs `step` after the flushes before it; a failed one leaves the chain usable for the next. */
  private chain(step: () => Promise<void>): Promise<void> {
    const run = this.flushing.then(step);
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async writeCovered(): Promise<void> {
    if (this.closed) return;
    if (this.cutPending) await this.cutBack();
    const due = this.backlog.due();
    if (due.length === 0) return;
    const bytes = encodeRecords(due);
    try {
      await this.io.append(this.fh, bytes);
      await this.fh.datasync();
    } catch (e) {
      this.failed(e);
      // Best effort now; if the cut fails too, the next attempt cuts before it appends.
      this.cutPending = true;
      await this.cutBack().catch(() => undefined);
      throw e;
    }
    this.backlog.landed(due.length);
    this.goodBytes += bytes.length;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private async cutBack(): Promise<void> {
    await this.fh.truncate(this.goodBytes);
    await this.fh.datasync();
    this.cutPending = false;
  }

  private failed(e: unknown): void {
    this.backlog.failed(e);
    this.onFailure?.(e);
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // Only what an earlier flush covered: records queued since then wait for their data's sync.
      void this.chain(() => this.writeCovered()).catch(() => undefined);
    }, this.backlog.nextRetryMs());
    this.retryTimer.unref();
  }

  private async rewrite(bytes: Uint8Array): Promise<void> {
    const tmp = `${this.path}.tmp`;
    const out = await open(tmp, 'w');
    try {
      await out.write(bytes);
      await out.datasync();
    } finally {
      await out.close();
    }
    await rename(tmp, this.path);
    // The new file is opened before the old handle goes, so a failure leaves a usable handle.
    const next = await open(this.path, 'a+');
    const old = this.fh;
    this.fh = next;
    this.goodBytes = bytes.length;
    this.cutPending = false;
    await old.close();
  }
}
