import { FinishReason } from './gen/mnemo/v1/common_pb.js';
import { HeartbeatSchema, InferenceRequestSchema, ScheduleReplySchema, TokenEventSchema } from './gen/mnemo/v1/nats_pb.js';
import { decodeMessage, encodeMessage } from './nats.codec.js';

describe(encodeMessage.name, () => {
  it('round-trips an inference request with every field set', () => {
    const init = {
      requestId: 'r-1',
      tenant: 't',
      sessionId: 's',
      model: 'mnemo-tiny',
      tokens: [1, 2, 255, 260],
      chunkKeys: ['a'.repeat(32)],
      priority: -2,
      sampling: { temperature: 0.7, topP: 0.9, maxTokens: 16, seed: 2n ** 40n + 3n, stopTokenIds: [10] },
      replySubject: '_INBOX.x',
      deadlineUnixMs: 1_760_000_000_123,
    };
    const sut = decodeMessage(InferenceRequestSchema, encodeMessage(InferenceRequestSchema, init));
    expect(sut).toMatchObject({ ...init, sampling: { ...init.sampling } });
    // Times are doubles (plain numbers); 64-bit integers such as the seed are bigint.
    expect(typeof sut.deadlineUnixMs).toBe('number');
    expect(typeof sut.sampling?.seed).toBe('bigint');
  });

  it('keeps the oneof case of a schedule reply', () => {
    const ok = decodeMessage(ScheduleReplySchema, encodeMessage(ScheduleReplySchema, { result: { case: 'nodeId', value: 'n1' } }));
    expect(ok.result).toEqual({ case: 'nodeId', value: 'n1' });
    const err = decodeMessage(
      ScheduleReplySchema,
      encodeMessage(ScheduleReplySchema, { result: { case: 'error', value: { code: 'no_node_available', message: 'x' } } }),
    );
    expect(err.result.case).toBe('error');
    expect(err.result.case === 'error' && err.result.value.code).toBe('no_node_available');
  });

  it('fills proto3 defaults for absent fields', () => {
    const sut = decodeMessage(TokenEventSchema, encodeMessage(TokenEventSchema, { requestId: 'r' }));
    expect(sut).toMatchObject({ seq: 0, tokens: [], done: false, finishReason: FinishReason.UNSPECIFIED });
    expect(sut.usage).toBeUndefined();
  });

  it('rejects malformed bytes', () => {
    expect(() => decodeMessage(HeartbeatSchema, Uint8Array.from([0x0a, 0xff, 0xff]))).toThrow();
  });
});
