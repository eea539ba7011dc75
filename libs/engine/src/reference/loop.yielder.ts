import { setImmediate as nextLoopTurn } from 'node:timers/promises';

/**
 * CPU kernels run on the JS thread, so a long pass would hold the event loop: no heartbeat,
 * no cancel, no streamed token until it ends. A pass asks between layers; once `everyMs` of
 * compute has gone by it gives the loop one turn. Infinity never yields (benchmarks).
 */
export class LoopYielder {
  private last = performance.now();

  constructor(private readonly everyMs: number) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.last < this.everyMs) return;
    await nextLoopTurn();
    this.last = performance.now();
  }
}

/** Default compute slice between event-loop turns: well under a heartbeat, a few layers of a long prefill. */
export const DEFAULT_YIELD_EVERY_MS = 20;
