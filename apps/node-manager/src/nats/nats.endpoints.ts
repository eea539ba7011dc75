import { Inject, Injectable } from '@nestjs/common';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { JsonLogger, NATS_CONNECTION } from '@mnemo/service-kit';

/** Handles one message; a returned payload is sent as the reply (when the message has a reply subject). */
export type NatsHandler = (msg: Msg) => Promise<Uint8Array | void> | Uint8Array | void;

/**
 * The node's NATS entry points, closable one by one: on shutdown the infer subject closes
 * first (no new work) while cancels keep flowing until the batch has drained.
 */
@Injectable()
export class NatsEndpoints {
  private readonly subs = new Map<string, Subscription>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  listen(subject: string, handler: NatsHandler): void {
    const sub = this.nc.subscribe(subject, {
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

  get listening(): boolean {
    return this.subs.size > 0 && !this.nc.isClosed();
  }

  /** Stops taking messages on one subject and waits for handlers in flight. */
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
