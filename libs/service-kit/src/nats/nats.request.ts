import { RequestError, TimeoutError, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';

/**
 * How one NATS request ended. The client reports a missing subscriber and a late answer in
 * three different error shapes (a TimeoutError, or a RequestError carrying one); callers only
 * care which of the two it was, or that something else broke.
 */
export type NatsRequestResult =
  | { readonly kind: 'reply'; readonly data: Uint8Array }
  | { readonly kind: 'no_responders' }
  | { readonly kind: 'timeout' }
  /** The request could not be sent or answered otherwise: connection closed, draining or reconnecting. */
  | { readonly kind: 'failed'; readonly error: unknown };

/** One request/reply; never throws, every way it can go wrong is a result. */
export async function requestNats(
  nc: NatsConnection,
  subject: string,
  payload: Uint8Array,
  timeoutMs: number,
  headers?: MsgHdrs,
): Promise<NatsRequestResult> {
  try {
    return { kind: 'reply', data: (await nc.request(subject, payload, { timeout: timeoutMs, ...(headers ? { headers } : {}) })).data };
  } catch (e) {
    if (e instanceof RequestError && e.isNoResponders()) return { kind: 'no_responders' };
    if (e instanceof TimeoutError || (e instanceof RequestError && e.cause instanceof TimeoutError)) return { kind: 'timeout' };
    return { kind: 'failed', error: e };
  }
}
