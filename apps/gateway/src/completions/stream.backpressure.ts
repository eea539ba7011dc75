/** What the gateway tells the node after a change in a request's buffered events. */
export type FlowAction = 'pause' | 'resume' | 'overflow' | null;

/**
 * Hysteresis over one request's event buffer (between the node's inbox and a slow client):
 * pause the node when the buffer reaches half its capacity, resume once it drained to an
 * eighth, so a client reading at about the generation rate does not flip it every token.
 * Events already in flight when the pause is sent land in the other half; reaching the full
 * capacity means the node ignored the pause, and the request is given up (`overflow`).
 */
export class StreamBackpressure {
  readonly high: number;
  readonly low: number;
  paused = false;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 8) throw new RangeError(`capacity must be an integer ≥ 8, got ${capacity}`);
    this.high = Math.ceil(capacity / 2);
    this.low = Math.floor(capacity / 8);
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
