/** The clock as a port, so registry expiry is testable without waiting. Milliseconds. */
export interface Clock {
  now(): number;
}

export const CLOCK = Symbol('CLOCK');

/** Monotonic: a wall-clock jump must not expire (or resurrect) every node at once. */
export const monotonicClock: Clock = { now: () => performance.now() };
