import { open, rename, type FileHandle } from 'node:fs/promises';
import { compactJournal, decodeJournal, encodeRecords, JOURNAL_VERSION, type DecodedJournal, type JournalRecord, type LookupTable } from '@mnemo/kv-core';

/** What opening a journal found on disk. */
export interface JournalOpenResult {
  readonly decoded: DecodedJournal;
  /** Bytes dropped from a torn or corrupt tail (0 when the file ended cleanly). */
  readonly truncatedBytes: number;
}

/**
 * The SSD pool's lookup table, journaled to one append-only file per model (format: kv-core
 * `journal.codec.ts`). Appends are buffered and written with one `write` + `fdatasync` per
 * flush (group commit), so a put record is durable a few milliseconds after its data landed on
 * the SSD; a crash in between loses the record, and the space it named is simply free again
 * after replay. A torn or corrupt tail found at open is cut off before anything is appended.
 */
export class SsdJournalFile {
  private pending: JournalRecord[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private appended = 0;

  private constructor(
    readonly path: string,
    private fh: FileHandle,
  ) {}

  /** Opens (creating with a header when missing or unreadable) and decodes what is there. */
  static async open(path: string, numLayers: number): Promise<{ journal: SsdJournalFile; found: JournalOpenResult }> {
    const fh = await open(path, 'a+');
    try {
      const bytes = new Uint8Array(await fh.readFile());
      const decoded = decodeJournal(bytes);
      const journal = new SsdJournalFile(path, fh);
      const usable = decoded.header !== undefined && decoded.header.numLayers === numLayers && (decoded.end === 'clean' || decoded.end === 'torn' || decoded.end === 'corrupt');
      if (!usable) {
        // Empty, not a journal, another version or another model's geometry: start a fresh log.
        await journal.rewrite(encodeRecords([header(numLayers, false, Date.now())]));
        return { journal, found: { decoded: { ...decoded, records: [] }, truncatedBytes: bytes.length } };
      }
      const truncatedBytes = bytes.length - decoded.validBytes;
      if (truncatedBytes > 0) {
        await fh.truncate(decoded.validBytes);
        await fh.datasync();
      }
      return { journal, found: { decoded, truncatedBytes } };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Records appended since open (a compaction resets the count). */
  get recordsSinceCompaction(): number {
    return this.appended;
  }

  /** Records queued and not yet written. */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** Queues records; they reach the disk with the next flush. */
  append(records: readonly JournalRecord[]): void {
    this.pending.push(...records);
  }

  /** Writes and syncs everything queued so far; flushes run one after another. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.length === 0) return;
      const batch = this.pending;
      this.pending = [];
      await this.fh.write(encodeRecords(batch));
      await this.fh.datasync();
      this.appended += batch.length;
    });
    return this.flushing;
  }

  /** Replaces the log by a snapshot of the table's SSD entries (temp file, fsync, rename). */
  async compact(table: LookupTable): Promise<void> {
    await this.flush();
    this.flushing = this.flushing.then(async () => {
      await this.rewrite(compactJournal(table, Date.now()));
      this.appended = 0;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.fh.close();
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
    await this.fh.close();
    this.fh = await open(this.path, 'a+');
  }
}

function header(numLayers: number, snapshot: boolean, createdMs: number): JournalRecord {
  return { kind: 'header', version: JOURNAL_VERSION, numLayers, snapshot, entries: 0, createdMs };
}
