/**
 * Time as a port, so expiry and latency logic is testable without waiting. Durations use the
 * monotonic clock (a wall-clock jump must not expire or resurrect everything at once);
 * deadlines set by another machine are wall-clock Unix milliseconds.
 */
export interface Clock {
  /** Monotonic milliseconds, for durations and liveness. */
  monotonicMs(): number;
  /** Wall-clock Unix milliseconds, for deadlines that cross machines. */
  unixMs(): number;
}

/** Injection token of the service's {@link Clock}. */
export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };
