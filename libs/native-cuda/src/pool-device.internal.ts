import type { RawHostPool, RawSsdPool } from './addon.loader.js';

/**
 * Promises a device has outstanding, so `close()` can wait for them. A Promise leaves the
 * set when it settles, whichever way.
 */
export class InFlightTracker {
  private readonly pending = new Set<Promise<unknown>>();

  get size(): number {
    return this.pending.size;
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    const done = (): void => {
      this.pending.delete(p);
    };
    p.then(done, done);
    return p;
  }

  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

/**
 * A pool device's closing, once: `closed` is true from the first close() on (new work is
 * refused at once), and `shutdown` runs that once, given the drain of the work in flight.
 */
export class DeviceClosing {
  readonly inFlight = new InFlightTracker();
  private closing: Promise<void> | undefined;

  get closed(): boolean {
    return this.closing !== undefined;
  }

  close(shutdown: (drain: () => Promise<void>) => Promise<void>): Promise<void> {
    this.closing ??= shutdown(() => this.inFlight.drain());
    return this.closing;
  }
}

/** What transfers need to know about a pool device; not part of the public surface. */
export type DeviceInternals =
  | { kind: 'host'; raw: RawHostPool; name: string; bytes: number; inFlight: InFlightTracker; isClosed(): boolean }
  | { kind: 'ssd'; raw: RawSsdPool; name: string; bytes: number; blockSize: number; inFlight: InFlightTracker; isClosed(): boolean };

const internals = new WeakMap<object, DeviceInternals>();

export function registerDevice(device: object, inner: DeviceInternals): void {
  internals.set(device, inner);
}

/** The internals of a HostPoolDevice / SsdPoolDevice, or undefined for anything else. */
export function deviceInternals(value: unknown): DeviceInternals | undefined {
  return typeof value === 'object' && value !== null ? internals.get(value) : undefined;
}
