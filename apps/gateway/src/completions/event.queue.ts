/**
 * Hands values pushed from callbacks (NATS subscription, timers, abort) to one async
 * consumer. After `fail`, `next` rejects with that error once everything pushed before it
 * was taken — the error is the queue's last item. `onTake` hears the size left after each
 * take, which is where backpressure learns that a slow consumer caught up.
 */
export class EventQueue<T> {
  private readonly items: T[] = [];
  private failure?: { error: unknown };
  private waiter?: { resolve: (v: T) => void; reject: (e: unknown) => void };

  constructor(private readonly onTake: (remaining: number) => void = () => undefined) {}

  /** Items pushed and not yet taken. */
  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    if (this.failure) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(item);
      this.onTake(0);
    } else {
      this.items.push(item);
    }
  }

  /** The first failure wins; later ones are ignored. */
  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      w.reject(error);
    }
  }

  next(): Promise<T> {
    if (this.items.length > 0) {
      const item = this.items.shift()!;
      this.onTake(this.items.length);
      return Promise.resolve(item);
    }
    if (this.failure) return Promise.reject(this.failure.error);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }
}
