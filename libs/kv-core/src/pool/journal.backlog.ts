import type { JournalRecord } from './journal.codec.js';

/** Whether the journal keeps up: `failing` from a failed write or sync until a flush succeeds again. */
export interface JournalHealth {
  readonly state: 'ok' | 'failing';
  /** Failed flushes since open. */
  readonly failures: number;
  /** Records waiting for a successful flush. */
  readonly pending: number;
  readonly lastError?: string;
}

/** A failed flush is tried again after this long, doubling up to the cap, until one succeeds. */
export const JOURNAL_RETRY_FIRST_MS = 100;
export const JOURNAL_RETRY_MAX_MS = 5_000;

/**
 * The books of a group-committed journal file: the records queued and not yet durable, which of
 * them a flush may write, the failures since open and the retry backoff. The file does the I/O
 * and keeps the timer; this says what to write and how long to wait.
 *
 * Invariant: `covered <= records.length`, and only covered records are ever written — a record
 * is covered once a flush was asked for it, which the caller does after syncing the data it
 * names, so a record never reaches the disk before its data. A failed write keeps every record
 * (covered ones go again with the retry or the next flush), in order.
 */
export class JournalBacklog {
  private readonly records: JournalRecord[] = [];
  /** Leading records whose data is known durable (a flush was asked for them). */
  private covered = 0;
  private failures = 0;
  private lastError?: string;
  private retryMs = JOURNAL_RETRY_FIRST_MS;
  /** Records written since open or the last compaction. */
  written = 0;

  /** Records queued and not yet written. */
  get hasPending(): boolean {
    return this.records.length > 0;
  }

  get health(): JournalHealth {
    return {
      state: this.lastError !== undefined ? 'failing' : 'ok',
      failures: this.failures,
      pending: this.records.length,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  add(records: readonly JournalRecord[]): void {
    this.records.push(...records);
  }

  /** A flush was asked for: everything queued now may be written. */
  cover(): void {
    this.covered = this.records.length;
  }

  /** What the next write takes: the covered records, in order. */
  due(): readonly JournalRecord[] {
    return this.records.slice(0, this.covered);
  }

  /** The first `n` due records were written and synced: they leave, the journal is healthy and the backoff starts over. */
  landed(n: number): void {
    this.records.splice(0, n);
    this.covered -= n;
    this.written += n;
    this.lastError = undefined;
    this.retryMs = JOURNAL_RETRY_FIRST_MS;
  }

  /** A write or sync failed: nothing leaves, the journal is failing until a write lands. */
  failed(e: unknown): void {
    this.failures++;
    this.lastError = e instanceof Error ? e.message : String(e);
  }

  /** The wait before the next retry, doubling each time it is asked for up to the cap. */
  nextRetryMs(): number {
    const ms = this.retryMs;
    this.retryMs = Math.min(JOURNAL_RETRY_MAX_MS, this.retryMs * 2);
    return ms;
  }
}
