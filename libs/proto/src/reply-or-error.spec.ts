import { ErrorReplySchema } from './gen/mnemo/v1/common_pb.js';
import { ForgetReplySchema, PrefetchReplySchema } from './gen/mnemo/v1/nats_pb.js';
import { decodeReplyOrError, encodeMessage } from './nats.codec.js';

describe(decodeReplyOrError.name, () => {
  it.each([
    [
      'a PrefetchReply with chunks',
      PrefetchReplySchema,
      encodeMessage(PrefetchReplySchema, { chunksQueued: 7 }),
      { ok: expect.objectContaining({ chunksQueued: 7 }) },
    ],
    [
      'a PrefetchReply with none (empty bytes)',
      PrefetchReplySchema,
      encodeMessage(PrefetchReplySchema, { chunksQueued: 0 }),
      { ok: expect.objectContaining({ chunksQueued: 0 }) },
    ],
    ['a ForgetReply', ForgetReplySchema, encodeMessage(ForgetReplySchema, {}), { ok: expect.anything() }],
    [
      'an ErrorReply in place of a PrefetchReply',
      PrefetchReplySchema,
      encodeMessage(ErrorReplySchema, { code: 'invalid_request', message: 'm' }),
      { error: expect.objectContaining({ code: 'invalid_request' }) },
    ],
    [
      'an ErrorReply in place of a ForgetReply',
      ForgetReplySchema,
      encodeMessage(ErrorReplySchema, { code: 'overloaded', message: '' }),
      { error: expect.objectContaining({ code: 'overloaded' }) },
    ],
  ] as const)('tells %s', (_n, schema, bytes, expected) => {
    expect(decodeReplyOrError(schema, bytes)).toEqual(expected);
  });
});
