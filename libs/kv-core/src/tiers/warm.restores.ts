/** A restore started ahead of its pass: the positions it reads, and how to let it go. */
export interface WarmReader {
  readonly from: number;
  readonly until: number;
  release(): void;
  /** After release: settles once every read it started has ended. */
  whenIdle(): Promise<void>;
}

/** Runs `fn` once after `ms` unless the returned cancel is called first (the node: an unref'd setTimeout). */
export type After = (ms: number, fn: () => void) => () => void;

/**
 * How long a warm restore waits for its request's pass before it lets its pins go: far longer
 * than a queue wait, short enough that a request lost without a cool() holds nothing for long.
 */
export const WARM_TTL_MS = 5_000;

/**
 * Restores started while their requests wait for a pass (KvStore.warm), by request id: the pass
 * takes its reader over when the positions are unchanged, and one nobody takes lets its pins go
 * after WARM_TTL_MS.
 */
export class WarmRestores<R extends WarmReader> {
  /** Used by their pass, stale (positions changed), expired. */
  readonly counters = { started: 0, used: 0, stale: 0, expired: 0 };
  private readonly warmed = new Map<string, { reader: R; cancel: () => void }>();

  constructor(private readonly after: After) {}

  has(requestId: string): boolean {
    return this.warmed.has(requestId);
  }

  add(requestId: string, reader: R): void {
    const cancel = this.after(WARM_TTL_MS, () => {
      const r = this.take(requestId);
      if (!r) return;
      r.release();
      this.counters.expired++;
    });
    this.warmed.set(requestId, { reader, cancel });
    this.counters.started++;
  }

  /**
   * The pass of `requestId` restores [from, until): its warm reader when it covers exactly that;
   * otherwise (the device prefix or the tiers changed while it waited) the reader is let go —
   * its reads are freed, a promotion joins the host pool only once a copy out of it checked its CRC.
   */
  takeFor(requestId: string, from: number, until: number): R | undefined {
    const r = this.take(requestId);
    if (!r) return undefined;
    if (r.from === from && r.until === until) {
      this.counters.used++;
      return r;
    }
    r.release();
    this.counters.stale++;
    return undefined;
  }

  /** Lets the request's warm restore go, if it has one. */
  cool(requestId: string): void {
    this.take(requestId)?.release();
  }

  /** Every warm restore let go, its reads settled (before the devices close under them). */
  async coolAll(): Promise<void> {
    const readers = [...this.warmed.keys()].map((id) => this.take(id)!);
    for (const r of readers) r.release();
    await Promise.all(readers.map((r) => r.whenIdle()));
  }

  private take(requestId: string): R | undefined {
    const w = this.warmed.get(requestId);
    if (!w) return undefined;
    this.warmed.delete(requestId);
    w.cancel();
    return w.reader;
  }
}
