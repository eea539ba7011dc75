/** What the gateway tells the node after a change in a request's buffered events. */
export type FlowAction = 'pause' | 'resume' | 'overflow' | null;

/**
 * Hysteresis over one request's event buffer (between the node's inbox and a slow client):
 * pause the node when the buffer reaches a quarter of its capacity, resume once it drained to
 * a sixteenth, so a client reading at about the generation rate does not flip it every token.
 * The other three quarters take the events already in flight while the pause travels (a fast
 * engine makes many per round trip); reaching the full capacity means the node ignored the
 * pause, and the request is given up (`overflow`).
 */
export class StreamBackpressure {
  readonly high: number;
  readonly low: number;
  paused = false;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 8) throw new RangeError(`capacity must be an integer ≥ 8, got ${capacity}`);
    this.high = Math.ceil(capacity / 4);
    this.low = Math.floor(capacity / 16);
  }

  afterPush(size: number): FlowAction {
    if (size >= this.capacity) return 'overflow';
    if (!this.paused && size >= this.high) {
      this.paused = true;
      return 'pause';
    }
    return null;
  }

  afterTake(size: number): FlowAction {
    if (this.paused && size <= this.low) {
      this.paused = false;
      return 'resume';
    }
    return null;
  }
}
