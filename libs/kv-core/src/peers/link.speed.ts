/** What one transfer to a peer took: bytes received and the wall time they took to arrive. */
export interface LinkSample {
  readonly bytes: number;
  readonly ms: number;
}

export interface LinkDeadlineOptions {
  /** Fixed part of every deadline: a round trip and scheduling noise on a busy host, ms. */
  readonly baseMs?: number;
  /** A chunk may take this many times as long as the measured link needs for it. */
  readonly slack?: number;
  /** Bytes/s assumed before anything was measured (a modest datacenter link, 200 MB/s). */
  readonly priorBytesPerSec?: number;
  /** Weight of the newest sample in the moving average. */
  readonly alpha?: number;
}

const DEFAULTS = { baseMs: 500, slack: 4, priorBytesPerSec: 200e6, alpha: 0.3 } as const;

/**
 * The measured speed of the link to one peer, and the deadline a chunk of a given size gets on
 * it. A peer that hangs (stopped, swapping, deadlocked) would otherwise hold a fetch — and the
 * prefill batch waiting on it — until the whole stream's timeout; with a deadline per chunk
 * of `baseMs + slack · bytes / speed`, it costs at most that, after which the chunk is a miss
 * and its sequence recomputes. Speed is an exponential moving average of observed throughput
 * (bytes over the time each chunk took to arrive), so a deadline follows the link it is on: a
 * loopback peer gets a short one, a slow cross-rack link a long one. Samples too small to say
 * anything about bandwidth (latency-bound, under 64 KiB) leave the estimate alone.
 */
export class LinkSpeed {
  private bytesPerSec: number;
  private readonly o: Required<LinkDeadlineOptions>;

  constructor(options: LinkDeadlineOptions = {}) {
    this.o = { ...DEFAULTS, ...options };
    this.bytesPerSec = this.o.priorBytesPerSec;
  }

  /** Bytes per second as measured so far (the prior until a sample counts). */
  get speed(): number {
    return this.bytesPerSec;
  }

  observe(s: LinkSample): void {
    if (!(s.bytes >= 64 * 1024) || !(s.ms > 0)) return;
    const rate = (s.bytes * 1000) / s.ms;
    this.bytesPerSec = this.o.alpha * rate + (1 - this.o.alpha) * this.bytesPerSec;
  }

  /** How long a chunk of `bytes` may take to arrive before it counts as a miss, ms. */
  deadlineMs(bytes: number): number {
    return Math.ceil(this.o.baseMs + (this.o.slack * Math.max(0, bytes) * 1000) / this.bytesPerSec);
  }
}
