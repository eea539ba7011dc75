import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Msg } from '@nats-io/transport-node';
import { StringValueSchema } from '@bufbuild/protobuf/wkt';
import { JsonLogger } from '../json.logger.js';
import { ServiceMetrics } from '../metrics.registry.js';
import type { NatsEndpoints, NatsHandler } from './nats.endpoints.js';
import { NatsResponders } from './nats.responders.js';

function setup() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = new JsonLogger('test', 'debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
  const metrics = new ServiceMetrics('test');
  const listened = new Map<string, { handler: NatsHandler; queue?: string }>();
  const endpoints = { listen: (subject: string, handler: NatsHandler, queue?: string) => listened.set(subject, { handler, queue }) };
  const sut = new NatsResponders(endpoints as unknown as NatsEndpoints, logger, metrics);
  const call = async (subject: string, data: Uint8Array) => listened.get(subject)!.handler({ data } as Msg);
  return { sut, listened, lines, metrics, call };
}

const encode = (value: string) => toBinary(StringValueSchema, create(StringValueSchema, { value }));
const malformed = Uint8Array.of(0xff, 0xff, 0xff);

describe(NatsResponders.name, () => {
  it.each([
    ['timed by default', undefined, 1],
    ['untimed when asked', false, 0],
  ])('respond listens on the subject in its queue group, %s', async (_name, timed, counted) => {
    const { sut, listened, metrics, call } = setup();
    sut.respond('s.echo', {
      operation: 'echo',
      request: StringValueSchema,
      handle: (r) => `seen ${r.value}`,
      reply: (o) => encode('ok' in o ? o.ok : o.error.code),
      queue: 'q',
      ...(timed === undefined ? {} : { timed }),
    });
    const reply = (await call('s.echo', encode('r1'))) as Uint8Array;
    expect(fromBinary(StringValueSchema, reply).value).toBe('seen r1');
    expect(listened.get('s.echo')!.queue).toBe('q');
    const samples = (await metrics.requests.get()).values.filter((v) => v.labels.operation === 'echo');
    expect(samples.reduce((n, v) => n + v.value, 0)).toBe(counted);
  });

  it('consume hands a decoded message on and drops a malformed one with a warning', async () => {
    const { sut, lines, call } = setup();
    const seen: string[] = [];
    sut.consume(
      's.event',
      'probe',
      (data) => fromBinary(StringValueSchema, data).value,
      (v) => seen.push(v),
    );
    await call('s.event', encode('e1'));
    await call('s.event', malformed);
    expect(seen).toEqual(['e1']);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'malformed probe ignored' })]);
  });
});
