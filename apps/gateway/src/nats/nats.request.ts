import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { requestNats } from '@mnemo/service-kit';
import type { ErrorReply } from '@mnemo/proto';

/**
 * One NATS request whose transport failures become domain errors, so callers map them like
 * any other: nobody subscribed → no_node_available, no answer in time → timeout.
 */
export async function natsRequest(
  nc: NatsConnection,
  subject: string,
  payload: Uint8Array,
  timeoutMs: number,
  who: string,
  headers?: MsgHdrs,
): Promise<Uint8Array> {
  const sent = await requestNats(nc, subject, payload, timeoutMs, headers);
  switch (sent.kind) {
    case 'reply':
      return sent.data;
    case 'no_responders':
      throw new MnemoError(ErrorCode.NoNodeAvailable, `no ${who} is running`);
    case 'timeout':
      throw new MnemoError(ErrorCode.Timeout, `the ${who} did not answer within ${timeoutMs} ms`);
    case 'failed':
      throw sent.error;
  }
}

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** An ErrorReply from another service, as a domain error (unknown codes become internal). */
export function fromReply(e: ErrorReply): MnemoError {
  const code = CODES.has(e.code) ? (e.code as ErrorCode) : ErrorCode.Internal;
  return new MnemoError(code, e.message || e.code);
}
