import { NoRespondersError, RequestError, TimeoutError, type NatsConnection } from '@nats-io/transport-node';
import { requestNats } from './nats.request.js';

/** A connection whose request resolves to `reply` or rejects with it. */
const answering = (reply: Uint8Array | Error) =>
  ({ request: async () => (reply instanceof Error ? Promise.reject(reply) : { data: reply }) }) as unknown as NatsConnection;

describe(requestNats.name, () => {
  const closed = new Error('connection closed');
  it.each<[string, Uint8Array | Error, object]>([
    ['a reply', Uint8Array.of(7), { kind: 'reply', data: Uint8Array.of(7) }],
    ['nobody subscribed', new RequestError('no responders', { cause: new NoRespondersError('s') }), { kind: 'no_responders' }],
    ['a bare timeout', new TimeoutError(), { kind: 'timeout' }],
    ['a timeout inside a RequestError', new RequestError('timeout', { cause: new TimeoutError() }), { kind: 'timeout' }],
    ['anything else', closed, { kind: 'failed', error: closed }],
  ])('%s', async (_name, reply, want) => {
    await expect(requestNats(answering(reply), 's', Uint8Array.of(), 100)).resolves.toEqual(want);
  });
});
