import type { Clock } from './clock.port.js';

/** A {@link Clock} for tests: it stands still until the test moves it. */
export class ManualClock implements Clock {
  constructor(
    public mono = 0,
    public unix = 1_700_000_000_000,
  ) {}

  monotonicMs(): number {
    return this.mono;
  }

  unixMs(): number {
    return this.unix;
  }

  /** Moves both clocks on by `ms`, as time passing does. */
  advance(ms: number): void {
    this.mono += ms;
    this.unix += ms;
  }
}
