import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { DescMessage, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { ErrorCode, isMnemoError } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, ProfilerReplySchema, QueueGroups } from '@mnemo/proto';
import { JsonLogger, NATS_CONNECTION, ServiceMetrics } from '@mnemo/service-kit';

export type ProfilerResult = MessageInitShape<typeof ProfilerReplySchema>['result'];

/**
 * Answers profiler requests: decodes the protobuf request, runs the handler, replies with a
 * ProfilerReply — the result, or `error` with a domain code. Bad bytes are invalid_request;
 * anything that is not a MnemoError is `internal`, logged once with an error id.
 * One queue group, so each request reaches exactly one profiler replica.
 */
@Injectable()
export class ProfilerResponder implements OnApplicationShutdown {
  private readonly subs: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(ServiceMetrics) private readonly metrics: ServiceMetrics,
  ) {}

  serve<D extends DescMessage>(subject: string, schema: D, handle: (req: MessageShape<D>) => Promise<ProfilerResult>): void {
    const operation = subject.replace(/^mnemo\.v1\.profiler\./, '');
    const sub = this.nc.subscribe(subject, {
      queue: QueueGroups.PROFILER,
      callback: (err, msg) => {
        if (err) {
          this.logger.emit('error', 'subscription failed', { subject, err });
          return;
        }
        // Tracked so shutdown waits for replies already being computed.
        const p = this.answer(operation, msg, schema, handle).finally(() => this.inFlight.delete(p));
        this.inFlight.add(p);
      },
    });
    this.subs.push(sub);
  }

  /** Subscribed and connected: what /readyz reports. */
  get listening(): boolean {
    return !this.closed && this.subs.length > 0 && !this.nc.isClosed();
  }

  /** Stops taking requests, then waits for those in flight to be answered. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.subs.map((s) => s.drain().catch(() => undefined)));
    await Promise.all([...this.inFlight]);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private async answer<D extends DescMessage>(operation: string, msg: Msg, schema: D, handle: (req: MessageShape<D>) => Promise<ProfilerResult>): Promise<void> {
    let result: ProfilerResult;
    try {
      result = await this.metrics.time(operation, async () => {
        let req: MessageShape<D>;
        try {
          req = decodeMessage(schema, msg.data);
        } catch (e) {
          throw Object.assign(new Error(`malformed ${schema.typeName}: ${(e as Error).message}`), { code: ErrorCode.InvalidRequest });
        }
        return handle(req);
      });
    } catch (e) {
      result = { case: 'error', value: this.toErrorReply(operation, e) };
    }
    if (msg.reply) msg.respond(encodeMessage(ProfilerReplySchema, { result }));
  }

  private toErrorReply(operation: string, e: unknown): { code: string; message: string } {
    if (isMnemoError(e)) return { code: e.code, message: e.message };
    const code = (e as { code?: unknown })?.code;
    if (code === ErrorCode.InvalidRequest) return { code, message: (e as Error).message };
    const errorId = randomUUID();
    this.logger.emit('error', 'request failed', { operation, errorId, err: e instanceof Error ? e : String(e) });
    return { code: ErrorCode.Internal, message: `internal error (id ${errorId})` };
  }
}
