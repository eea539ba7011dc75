import { Inject, Injectable } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { JsonLogger, NATS_CONNECTION } from '@mnemo/service-kit';

/** Handles one message; a returned payload is sent as the reply (when the message has a reply subject). */
export type NatsHandler = (msg: Msg) => Promise<Uint8Array | void> | Uint8Array | void;

/**
 * The scheduler's NATS entry points. Tracks handlers in flight so shutdown answers what it
 * already took before the connection drains. Handlers own their error replies; anything thrown
 * here is a bug and is logged, never left unanswered silently.
 */
@Injectable()
export class NatsEndpoints {
  private readonly subs: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  listen(subject: string, handler: NatsHandler, queue?: string): void {
    const sub = this.nc.subscribe(subject, {
      ...(queue ? { queue } : {}),
      callback: (err, msg) => {
        if (err) {
          this.logger.emit('error', 'subscription failed', { subject, err });
          return;
        }
        const p = this.run(subject, msg, handler).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      },
    });
    this.subs.push(sub);
  }

  get listening(): boolean {
    return !this.closed && this.subs.length > 0 && !this.nc.isClosed();
  }

  /** Stops taking messages, then waits for the ones being handled. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.subs.map((s) => s.drain().catch(() => undefined)));
    await Promise.all([...this.inFlight]);
  }

  private async run(subject: string, msg: Msg, handler: NatsHandler): Promise<void> {
    try {
      const reply = await handler(msg);
      if (reply && msg.reply && !this.nc.isClosed()) msg.respond(reply);
    } catch (e) {
      this.logger.emit('error', 'handler failed', { subject, err: e instanceof Error ? e : String(e) });
    }
  }
}
