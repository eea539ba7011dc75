/** Time as a port: durations from a monotonic clock, deadlines against wall-clock Unix ms. */
export interface Clock {
  /** Monotonic milliseconds, for durations (TTFT, TPOT). */
  monotonicMs(): number;
  /** Wall-clock Unix milliseconds, for request deadlines set by another machine. */
  unixMs(): number;
}

export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };
