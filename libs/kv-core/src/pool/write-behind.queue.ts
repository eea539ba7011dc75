/** What one job of a {@link WriteBehindQueue} holds: its own bytes, or a buffer it shares with other jobs. */
export interface WriteBehindCost {
  readonly bytes: number;
  /** The buffer the job reads from, when others read it too (the segments of one payload): its bytes count once. */
  readonly shared?: object;
}

/**
 * The bookkeeping of a write-behind queue bounded in bytes (the node's SSD write-behind). Jobs
 * leave first in, first out, a batch at a time, and their bytes count from `offer` until `done`:
 * while queued and while being written, since both hold memory (a pinned host segment, or a
 * payload the host pool had no room for). Shared bytes count once, from the first of their jobs
 * offered to the last one done. Past the bound a job is refused, and its caller keeps it in the
 * faster tiers or lets it go (a later request recomputes it), never blocking; an empty queue takes
 * any job, so one larger than the bound still gets written.
 */
export class WriteBehindQueue<J> {
  private readonly jobs: J[] = [];
  private readonly sharers = new Map<object, number>();
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly cost: (job: J) => WriteBehindCost,
  ) {}

  /** Jobs waiting (not those taken and not yet done). */
  get length(): number {
    return this.jobs.length;
  }

  /** Bytes counted now: jobs waiting and jobs taken but not done. */
  get bytes(): number {
    return this.held;
  }

  /** Queues `job` unless its bytes would pass the bound; false: refused, nothing counted. */
  offer(job: J): boolean {
    const { bytes, shared } = this.cost(job);
    const adds = shared !== undefined && this.sharers.has(shared) ? 0 : bytes;
    if (this.held > 0 && this.held + adds > this.maxBytes) return false;
    this.held += adds;
    if (shared !== undefined) this.sharers.set(shared, (this.sharers.get(shared) ?? 0) + 1);
    this.jobs.push(job);
    return true;
  }

  /** The first job and those right behind it that `together` puts with it, at most `max`; they count until {@link done}. */
  takeBatch(max: number, together: (first: J, next: J) => boolean): J[] {
    const first = this.jobs[0];
    if (first === undefined) return [];
    let n = 0;
    while (n < this.jobs.length && n < max && together(first, this.jobs[n]!)) n++;
    return this.jobs.splice(0, n);
  }

  /** Every waiting job (a stop); they count until {@link done}. */
  takeAll(): J[] {
    return this.jobs.splice(0);
  }

  /** A taken job was written, failed or given up: its bytes, or its share of a buffer, no longer count. */
  done(job: J): void {
    const { bytes, shared } = this.cost(job);
    if (shared === undefined) {
      this.held -= bytes;
      return;
    }
    const left = (this.sharers.get(shared) ?? 0) - 1;
    if (left > 0) this.sharers.set(shared, left);
    else {
      this.sharers.delete(shared);
      this.held -= bytes;
    }
  }
}
