/**
 * The largest demand (tokens a model needed at once) seen in the last `windowMs`: Algorithm 1's
 * `max{len(r) | r in last t seconds}`. A monotonic deque — values strictly decreasing from front
 * to back — so record and max are amortized O(1): a new sample drops every older, smaller one,
 * which can never be the window's maximum again.
 */
export class DemandWindow {
  private readonly times: number[] = [];
  private readonly values: number[] = [];
  private head = 0;

  constructor(readonly windowMs: number) {
    if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError(`window must be a positive number of ms, got ${windowMs}`);
  }

  record(nowMs: number, tokens: number): void {
    if (!Number.isSafeInteger(tokens) || tokens < 0) throw new RangeError(`demand must be a non-negative integer, got ${tokens}`);
    while (this.values.length > this.head && this.values[this.values.length - 1]! <= tokens) {
      this.values.pop();
      this.times.pop();
    }
    this.values.push(tokens);
    this.times.push(nowMs);
  }

  /** Largest demand recorded in (now - window, now]; 0 when none. */
  max(nowMs: number): number {
    while (this.head < this.times.length && this.times[this.head]! <= nowMs - this.windowMs) this.head++;
    if (this.head > 64 && this.head * 2 > this.times.length) {
      this.times.splice(0, this.head);
      this.values.splice(0, this.head);
      this.head = 0;
    }
    return this.head < this.values.length ? this.values[this.head]! : 0;
  }
}
