import { create, toBinary } from '@bufbuild/protobuf';
import type { Msg } from '@nats-io/transport-node';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { StringValueSchema } from '@bufbuild/protobuf/wkt';
import { JsonLogger } from '../json.logger.js';
import { protoResponder, resultOneof, type ErrorReplyInit } from './proto.responder.js';

type Outcome = { ok: string } | { error: ErrorReplyInit };

function setup(handle: (value: string) => string | Promise<string>) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = new JsonLogger('test', 'debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
  const outcomes: Outcome[] = [];
  const sut = protoResponder({
    operation: 'probe',
    request: StringValueSchema,
    handle: (req) => handle(req.value),
    reply: (o) => {
      outcomes.push(o);
      return new Uint8Array([outcomes.length]);
    },
    logger,
  });
  const call = async (data: Uint8Array) => sut({ data } as Msg);
  return { call, outcomes, lines };
}

const valid = toBinary(StringValueSchema, create(StringValueSchema, { value: 'r1' }));

describe(protoResponder.name, () => {
  it('decodes the request and replies with the result', async () => {
    const { call, outcomes } = setup((id) => `seen ${id}`);
    expect(await call(valid)).toEqual(new Uint8Array([1]));
    expect(outcomes).toEqual([{ ok: 'seen r1' }]);
  });

  it.each<[string, Uint8Array, (id: string) => string, string]>([
    ['malformed bytes', Uint8Array.of(0xff, 0xff, 0xff), () => 'unused', ErrorCode.InvalidRequest],
    [
      'a domain error',
      valid,
      () => {
        throw new MnemoError(ErrorCode.Overloaded, 'busy');
      },
      ErrorCode.Overloaded,
    ],
    [
      'a bug',
      valid,
      () => {
        throw new TypeError('oops');
      },
      ErrorCode.Internal,
    ],
  ])('answers %s with an error code, never throwing', async (_name, data, handle, code) => {
    const { call, outcomes } = setup(handle);
    await call(data);
    expect(outcomes).toEqual([{ error: expect.objectContaining({ code }) }]);
  });

  it('logs an internal error once, with the id the reply carries', async () => {
    const { call, outcomes, lines } = setup(() => Promise.reject(new Error('db down')));
    await call(valid);
    const reply = (outcomes[0] as { error: ErrorReplyInit }).error;
    const logged = lines.filter((l) => l.level === 'error');
    expect(logged).toHaveLength(1);
    expect(reply.message).toContain(String(logged[0]!.errorId));
    expect(reply.message).not.toContain('db down');
  });
});

describe(resultOneof.name, () => {
  const error = { code: ErrorCode.NotFound, message: 'gone' };
  it.each([
    ['a result under its case, mapped', { ok: 2 }, { case: 'count', value: 4 }],
    ['an error under `error`, as it is', { error }, { case: 'error', value: error }],
  ])('%s', (_name, outcome, expected) => {
    expect(resultOneof(outcome, 'count', (n) => n * 2)).toEqual(expected);
  });
});
