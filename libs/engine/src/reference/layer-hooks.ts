/**
 * Layer-wise I/O hooks (SwiftCache §3.3, Symphony §3.4). `beforeLayer(l)` makes layer
 * l's KV resident (e.g. imports it from a host or SSD tier); it is started while layer
 * l-1 computes and awaited just before layer l runs, so only the part of the I/O that
 * compute did not hide shows up as blocked time. `afterLayer(l)` may start a
 * layer-wise store of the KV layer l just wrote; all of them are awaited at the end
 * of the pass.
 */
export interface LayerHooks {
  beforeLayer?: (layer: number) => Promise<void> | void;
  afterLayer?: (layer: number) => Promise<void> | void;
}

/** Counters an engine exports; blocked I/O time is the metric of the Unified pooling paper §V. */
export interface EngineStats {
  steps: number;
  prefillTokens: number;
  decodeTokens: number;
  /** Time spent waiting on beforeLayer hooks after compute ran out (blocked I/O). */
  blockedIoMs: number;
  /** Time spent waiting on afterLayer hooks at the end of passes. */
  storeWaitMs: number;
  hookCalls: number;
  /** Wall time inside forward passes, hooks included. */
  forwardMs: number;
  /** Prompt tokens (and resumed tokens) whose KV came from the device prefix cache instead of compute. */
  cachedTokens: number;
  /** Sequences whose device KV was dropped to make room (recomputed on resume). */
  preemptions: number;
}

export function emptyStats(): EngineStats {
  return {
    steps: 0,
    prefillTokens: 0,
    decodeTokens: 0,
    blockedIoMs: 0,
    storeWaitMs: 0,
    hookCalls: 0,
    forwardMs: 0,
    cachedTokens: 0,
    preemptions: 0,
  };
}

/** Starts hooks and times how long the pass waits on them. */
export class HookClock {
  private readonly stores: Array<Promise<void>> = [];

  constructor(
    private readonly hooks: LayerHooks,
    private readonly stats: EngineStats,
  ) {}

  startBefore(layer: number): Promise<void> | undefined {
    if (!this.hooks.beforeLayer) return undefined;
    this.stats.hookCalls++;
    return handled(this.hooks.beforeLayer(layer));
  }

  async wait(p: Promise<void> | undefined): Promise<void> {
    if (!p) return;
    const t0 = performance.now();
    await p;
    this.stats.blockedIoMs += performance.now() - t0;
  }

  after(layer: number): void {
    if (!this.hooks.afterLayer) return;
    this.stats.hookCalls++;
    const p = handled(this.hooks.afterLayer(layer));
    if (p) this.stores.push(p);
  }

  async drainStores(): Promise<void> {
    if (this.stores.length === 0) return;
    const t0 = performance.now();
    await Promise.all(this.stores.splice(0));
    this.stats.storeWaitMs += performance.now() - t0;
  }
}

/**
 * A hook's promise with a no-op rejection handler attached: it is awaited only after
 * the next layer computes, and Node must not report the rejection as unhandled before.
 */
function handled(r: Promise<void> | void): Promise<void> | undefined {
  if (!r || typeof (r as PromiseLike<void>).then !== 'function') return undefined;
  const p = Promise.resolve(r);
  p.catch(() => undefined);
  return p;
}
