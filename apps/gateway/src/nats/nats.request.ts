import { RequestError, TimeoutError, type NatsConnection, type MsgHdrs } from '@nats-io/transport-node';
import { ErrorCode, MnemoError, isMnemoError } from '@mnemo/kv-core';
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
  try {
    return (await nc.request(subject, payload, { timeout: timeoutMs, ...(headers ? { headers } : {}) })).data;
  } catch (e) {
    if (isMnemoError(e)) throw e;
    if (e instanceof RequestError && e.isNoResponders()) throw new MnemoError(ErrorCode.NoNodeAvailable, `no ${who} is running`);
    if (e instanceof TimeoutError || (e instanceof RequestError && e.cause instanceof TimeoutError)) {
      throw new MnemoError(ErrorCode.Timeout, `the ${who} did not answer within ${timeoutMs} ms`);
    }
    throw e;
  }
}

const CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** An ErrorReply from another service, as a domain error (unknown codes become internal). */
export function fromReply(e: ErrorReply): MnemoError {
  const code = CODES.has(e.code) ? (e.code as ErrorCode) : ErrorCode.Internal;
  return new MnemoError(code, e.message || e.code);
}
