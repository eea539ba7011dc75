/** Something that happens at a virtual time. */
export interface TwinEvent {
  fire(now: number): void;
}

/**
 * The twin's clock and agenda: events in virtual time (ms), earliest first, ties in the order
 * they were scheduled — so a run is a pure function of its inputs and seed. A binary heap over
 * parallel arrays: scheduling and firing allocate nothing once the arrays have grown to the
 * run's peak agenda. Nothing here reads a wall clock.
 */
export class EventQueue {
  private times = new Float64Array(1024);
  private seqs = new Float64Array(1024);
  private events: Array<TwinEvent | undefined> = new Array(1024);
  private size = 0;
  private seq = 0;
  private clock = 0;
  /** Events fired since the start. */
  fired = 0;

  /** Virtual now, ms. */
  get now(): number {
    return this.clock;
  }

  get pending(): number {
    return this.size;
  }

  /** Runs `event` at `at` (not before now: a past time fires now, after what is already due). */
  at(at: number, event: TwinEvent): void {
    if (!(at >= this.clock)) {
      if (Number.isNaN(at)) throw new RangeError('event time is NaN');
      at = this.clock;
    }
    if (this.size === this.times.length) this.grow();
    let i = this.size++;
    const s = this.seq++;
    // Sift up.
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.times[p]! < at || (this.times[p] === at && this.seqs[p]! < s)) break;
      this.times[i] = this.times[p]!;
      this.seqs[i] = this.seqs[p]!;
      this.events[i] = this.events[p];
      i = p;
    }
    this.times[i] = at;
    this.seqs[i] = s;
    this.events[i] = event;
  }

  /** Runs `event` `delay` ms from now. */
  after(delay: number, event: TwinEvent): void {
    this.at(this.clock + Math.max(0, delay), event);
  }

  /**
   * Fires events in time order until none is left, the next is past `until`, or `stop()` says
   * so; the clock ends at the last event fired (or `until` when the agenda ran past it).
   */
  run(until = Infinity, stop?: () => boolean): void {
    while (this.size > 0) {
      if (this.times[0]! > until) {
        this.clock = until;
        return;
      }
      const t = this.times[0]!;
      const ev = this.pop();
      this.clock = t;
      this.fired++;
      ev.fire(t);
      if (stop?.()) return;
    }
  }

  private pop(): TwinEvent {
    const top = this.events[0]!;
    const n = --this.size;
    const t = this.times[n]!;
    const s = this.seqs[n]!;
    const e = this.events[n];
    this.events[n] = undefined;
    let i = 0;
    // Sift down.
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && (this.times[r]! < this.times[l]! || (this.times[r] === this.times[l] && this.seqs[r]! < this.seqs[l]!)) ? r : l;
      if (t < this.times[c]! || (t === this.times[c] && s < this.seqs[c]!)) break;
      this.times[i] = this.times[c]!;
      this.seqs[i] = this.seqs[c]!;
      this.events[i] = this.events[c];
      i = c;
    }
    if (n > 0) {
      this.times[i] = t;
      this.seqs[i] = s;
      this.events[i] = e;
    }
    return top;
  }

  private grow(): void {
    const n = this.times.length * 2;
    const t = new Float64Array(n);
    t.set(this.times);
    const s = new Float64Array(n);
    s.set(this.seqs);
    this.times = t;
    this.seqs = s;
    this.events.length = n;
  }
}

/** An event that calls a function: for the rare events where a closure's allocation does not matter. */
export function call(fn: (now: number) => void): TwinEvent {
  return { fire: fn };
}
