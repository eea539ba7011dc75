import { Inject, Injectable } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { JsonLogger } from '../json.logger.js';
import { NATS_CONNECTION } from './nats.connection.js';

/** Handles one message; a returned payload is sent as the reply (when the message has a reply subject). */
export type NatsHandler = (msg: Msg) => Promise<Uint8Array | void> | Uint8Array | void;

/**
 * A service's NATS entry points. Handlers in flight are tracked so a shutdown answers what it
 * already took before the connection drains, and subjects close one by one (a node stops
 * taking work on its infer subject while cancels keep flowing). Handlers own their error
 * replies; anything thrown out of one is a bug and is logged, never dropped silently.
 */
@Injectable()
export class NatsEndpoints {
  private readonly subs = new Map<string, Subscription>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  /** `queue`: a queue group, so each message reaches one replica of the service. */
  listen(subject: string, handler: NatsHandler, queue?: string): void {
    if (this.subs.has(subject)) throw new RangeError(`already listening on ${subject}`);
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
    this.subs.set(subject, sub);
  }

  /** Subscribed and connected: what /readyz reports. */
  get listening(): boolean {
    return this.subs.size > 0 && !this.nc.isClosed();
  }

  /** Stops taking messages on one subject, then waits for the handlers in flight. */
  async close(subject: string): Promise<void> {
    const sub = this.subs.get(subject);
    this.subs.delete(subject);
    if (sub && !this.nc.isClosed()) await sub.drain().catch(() => undefined);
    await Promise.all([...this.inFlight]);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.subs.keys()].map((s) => this.close(s)));
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
