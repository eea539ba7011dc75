import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock } from '@mnemo/service-kit';

/** How long a cancel of a not-yet-admitted attempt is remembered: longer than any dispatch wait. */
export const CANCEL_MEMORY_MS = 60_000;
/** Most cancels remembered; the oldest is forgotten first (a cancel flood cannot grow memory). */
export const CANCEL_MEMORY_ENTRIES = 10_000;

/**
 * Cancels that arrived before the attempt they name was admitted. NATS delivers the infer and
 * cancel subjects independently, so after a dispatch timeout the scheduler's cancel may
 * overtake a slow admission; remembering it lets the admission be refused instead of running
 * a request nobody waits for. Attempt 0 stands for every attempt of the request.
 */
@Injectable()
export class CancelledAttempts {
  /** key → expiry (monotonic ms); Map order is insertion order, so the first key is the oldest. */
  private readonly entries = new Map<string, number>();

  constructor(@Inject(CLOCK) private readonly clock: Clock) {}

  remember(requestId: string, attempt: number): void {
    const key = keyOf(requestId, attempt);
    this.entries.delete(key);
    this.entries.set(key, this.clock.monotonicMs() + CANCEL_MEMORY_MS);
    while (this.entries.size > CANCEL_MEMORY_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  has(requestId: string, attempt: number): boolean {
    const now = this.clock.monotonicMs();
    for (const key of [keyOf(requestId, attempt), keyOf(requestId, 0)]) {
      const until = this.entries.get(key);
      if (until === undefined) continue;
      if (until > now) return true;
      this.entries.delete(key);
    }
    return false;
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(requestId: string, attempt: number): string {
  return `${attempt}:${requestId}`;
}
