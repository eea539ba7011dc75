import { Inject, Injectable } from '@nestjs/common';
import type { DescMessage } from '@bufbuild/protobuf';
import { JsonLogger } from '../json.logger.js';
import { ServiceMetrics } from '../metrics.registry.js';
import { NatsEndpoints, type NatsHandler } from './nats.endpoints.js';
import { protoResponder, type ProtoResponderOptions } from './proto.responder.js';

export type RespondOptions<D extends DescMessage, R> = Omit<ProtoResponderOptions<D, R>, 'logger' | 'metrics'> & {
  /** Count and time every request under `operation`; on unless set to false. */
  readonly timed?: boolean;
  /** A queue group, so each request reaches one replica of the service. */
  readonly queue?: string;
};

/**
 * Decodes with `decode`; a malformed message is logged as `malformed <what> ignored` and comes
 * back as undefined, for messages nobody waits on (a bad one must not stop the ones after it).
 */
export function decodeOrWarn<T>(logger: JsonLogger, what: string, decode: () => T): T | undefined {
  try {
    return decode();
  } catch (e) {
    logger.emit('warn', `malformed ${what} ignored`, { err: String(e) });
    return undefined;
  }
}

/**
 * A service's NATS entry points with its logger and metrics already attached: what every
 * `*.nats-handler.ts` used to inject three times over and wire into each responder by hand.
 * Handlers keep only the mapping from a request to a command and the use case they call.
 */
@Injectable()
export class NatsResponders {
  constructor(
    @Inject(NatsEndpoints) private readonly endpoints: NatsEndpoints,
    @Inject(JsonLogger) readonly logger: JsonLogger,
    @Inject(ServiceMetrics) readonly metrics: ServiceMetrics,
  ) {}

  /** Request/reply through {@link protoResponder} on `subject`. */
  respond<D extends DescMessage, R>(subject: string, options: RespondOptions<D, R>): void {
    const { timed = true, queue, ...o } = options;
    this.endpoints.listen(subject, protoResponder({ ...o, logger: this.logger, ...(timed ? { metrics: this.metrics } : {}) }), queue);
  }

  /** A message nobody waits on (an event, a cancel): decoded and handed on; a malformed one is logged and dropped. */
  consume<T>(subject: string, what: string, decode: (data: Uint8Array) => T, handle: (message: T) => void, queue?: string): void {
    this.endpoints.listen(
      subject,
      (msg) => {
        const message = decodeOrWarn(this.logger, what, () => decode(msg.data));
        if (message !== undefined) handle(message);
      },
      queue,
    );
  }

  /** A handler of its own shape (a reply that is not a protoResponder's). */
  listen(subject: string, handler: NatsHandler, queue?: string): void {
    this.endpoints.listen(subject, handler, queue);
  }
}
