import { randomUUID } from 'node:crypto';
import { fromBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { ErrorCode, MnemoError, isMnemoError } from '@mnemo/kv-core';
import type { JsonLogger } from '../json.logger.js';
import type { ServiceMetrics } from '../metrics.registry.js';
import type { NatsHandler } from './nats.endpoints.js';

type NatsMsg = Parameters<NatsHandler>[0];

/** The wire shape of mnemo.v1.ErrorReply. */
export interface ErrorReplyInit {
  code: string;
  message: string;
}

/** Decodes a request payload; malformed bytes are the caller's fault (invalid_request), never a crash. */
export function decodeRequest<D extends DescMessage>(schema: D, data: Uint8Array): MessageShape<D> {
  try {
    return fromBinary(schema, data);
  } catch (e) {
    throw new MnemoError(ErrorCode.InvalidRequest, `malformed ${schema.typeName}: ${(e as Error).message}`);
  }
}

/**
 * A domain error as an ErrorReply; anything else is `internal`, logged once with an error id
 * that the reply carries, so the caller's report and our log line meet.
 */
export function toErrorReply(e: unknown, logger: JsonLogger, operation: string): ErrorReplyInit {
  if (isMnemoError(e)) return { code: e.code, message: e.message };
  const errorId = randomUUID();
  logger.emit('error', `${operation} failed`, { operation, errorId, err: e instanceof Error ? e : String(e) });
  return { code: ErrorCode.Internal, message: `internal error (id ${errorId})` };
}

/** What a responder's `reply` encodes: the handler's result, or the error it threw. */
export type ReplyOutcome<R> = { readonly ok: R } | { readonly error: ErrorReplyInit };

/** The `result` oneof of a reply whose other arm is `error`: the handler's result (as `value` maps it) under `okCase`, or the error. */
export function resultOneof<R, C extends string, V>(
  o: ReplyOutcome<R>,
  okCase: C,
  value: (ok: R) => V,
): { case: C; value: V } | { case: 'error'; value: ErrorReplyInit } {
  return 'ok' in o ? { case: okCase, value: value(o.ok) } : { case: 'error', value: o.error };
}

export interface ProtoResponderOptions<D extends DescMessage, R> {
  /** Names the operation in metrics and logs. */
  readonly operation: string;
  readonly request: D;
  /** `msg`: the NATS message itself (its headers carry the caller's trace context). */
  readonly handle: (request: MessageShape<D>, msg: NatsMsg) => Promise<R> | R;
  /** Encodes the reply message: the handler's result, or the error it threw. */
  readonly reply: (outcome: ReplyOutcome<R>) => Uint8Array;
  readonly logger: JsonLogger;
  /** When set, every request is counted and timed under `operation`. */
  readonly metrics?: ServiceMetrics;
}

/**
 * The request/reply pattern every service repeats, once: decode the protobuf request, run the
 * use case, answer with its result or an ErrorReply carrying the domain code. Register the
 * returned handler with {@link NatsEndpoints.listen}.
 */
export function protoResponder<D extends DescMessage, R>(o: ProtoResponderOptions<D, R>): NatsHandler {
  const run = async (msg: NatsMsg): Promise<R> => o.handle(decodeRequest(o.request, msg.data), msg);
  return async (msg) => {
    try {
      const ok = o.metrics ? await o.metrics.time(o.operation, () => run(msg)) : await run(msg);
      return o.reply({ ok });
    } catch (e) {
      return o.reply({ error: toErrorReply(e, o.logger, o.operation) });
    }
  };
}
