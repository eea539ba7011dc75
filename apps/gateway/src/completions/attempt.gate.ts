import type { TokenEvent } from '@mnemo/proto';

/** One dispatch of a request: the node and the attempt number the scheduler stamped. */
export interface Attempt {
  readonly nodeId: string;
  readonly attempt: number;
}

/** What to do with one inbox event. `cancel`: an attempt now known not to be the placement, reported once. */
export type GateDecision =
  /** An event of the attempt the scheduler placed: stream it. */
  | { readonly kind: 'deliver'; readonly event: TokenEvent }
  /** Before the scheduler's reply: kept (with `held` others of the same attempt) until it names the attempt. */
  | { readonly kind: 'held'; readonly from: Attempt; readonly held: number; readonly cancel?: Attempt }
  /** Another attempt (the scheduler gave up on it, it admitted late): dropped. */
  | { readonly kind: 'stray'; readonly cancel?: Attempt }
  /** More events of one attempt before the scheduler's reply than the gateway holds. */
  | { readonly kind: 'overflow' };

/**
 * Decides which attempt's TokenEvents a request streams. After a dispatch timeout the
 * scheduler retries on another node with the same inbox, so the inbox may hear from two
 * attempts; only the one the scheduler reports as admitted counts, and its events can arrive
 * before that report. The scheduler dispatches one attempt at a time, so once attempt k is
 * heard every attempt below k is known to be abandoned: only the highest attempt heard is
 * held (at most `maxHeld` events) until `bind`, and every other attempt is dropped and
 * reported once for cancelling. A late attempt can thus neither end the request with its
 * CANCELLED event nor interleave its tokens. After a failover (`reopen`) the gate waits for a
 * new placement the same way, and every attempt up to the one that went down is a stray.
 */
export class AttemptGate {
  private bound?: Attempt;
  private candidate?: Attempt;
  private held: TokenEvent[] = [];
  private readonly reported = new Set<string>();
  /** Attempts up to this one belong to a node that went down (0: none did). */
  private floor = 0;

  constructor(private readonly maxHeld: number) {}

  offer(ev: TokenEvent): GateDecision {
    const from: Attempt = { nodeId: ev.nodeId, attempt: ev.attempt };
    if (this.bound) return same(from, this.bound) ? { kind: 'deliver', event: ev } : this.stray(from);
    if (from.attempt <= this.floor) return this.stray(from);
    let cancel: Attempt | undefined;
    if (this.candidate && !same(from, this.candidate)) {
      if (from.attempt <= this.candidate.attempt) return this.stray(from);
      // A later attempt exists, so the scheduler gave up on the one held so far.
      cancel = this.report(this.candidate);
      this.held = [];
    }
    this.candidate = from;
    if (this.held.length >= this.maxHeld) return { kind: 'overflow' };
    this.held.push(ev);
    return { kind: 'held', from, held: this.held.length, ...(cancel ? { cancel } : {}) };
  }

  /** The scheduler's placement: the held events if they are its, and the attempt to cancel if they are not. */
  bind(placement: Attempt): { deliver: TokenEvent[]; strays: Attempt[] } {
    this.bound = placement;
    const held = this.held;
    this.held = [];
    if (!this.candidate || same(this.candidate, placement)) return { deliver: held, strays: [] };
    const s = this.report(this.candidate);
    return { deliver: [], strays: s ? [s] : [] };
  }

  /**
   * The bound attempt's node went down and the request is re-dispatched (the caller cancels that
   * attempt): until the next `bind`, events are held as before a first placement, and every
   * attempt numbered up to the lost one is dropped — the scheduler numbers the continuation's on.
   */
  reopen(lost: Attempt): void {
    this.report(lost);
    this.floor = Math.max(this.floor, lost.attempt);
    this.bound = undefined;
    this.candidate = undefined;
    this.held = [];
  }

  private stray(from: Attempt): GateDecision {
    const cancel = this.report(from);
    return cancel ? { kind: 'stray', cancel } : { kind: 'stray' };
  }

  /** The attempt, the first time it is found to be a stray; undefined after that. */
  private report(a: Attempt): Attempt | undefined {
    const key = `${a.attempt}@${a.nodeId}`;
    if (this.reported.has(key)) return undefined;
    this.reported.add(key);
    return a;
  }
}

export function same(a: Attempt, b: Attempt): boolean {
  return a.nodeId === b.nodeId && a.attempt === b.attempt;
}
