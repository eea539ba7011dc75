import { create } from '@bufbuild/protobuf';
import { chunkKeys, ErrorCode } from '@mnemo/kv-core';
import { SimEngine } from '@mnemo/engine';
import { InferenceRequestSchema, SamplingParamsSchema, type InferenceRequest } from '@mnemo/proto';
import { SequenceStore } from '../batching/sequence.store.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import type { Clock } from '@mnemo/service-kit';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import { AdmitInferenceCommand } from './admit-inference.command.js';
import { AdmitInferenceUseCase } from './admit-inference.use-case.js';
import { CancelledAttempts } from './cancelled-attempts.js';

const NOW = 1_700_000_000_000;
const clock: Clock = { monotonicMs: () => 0, unixMs: () => NOW };

function setup(maxWaiting = 2, kvBlocks = 1024) {
  const store = new SequenceStore();
  const lifecycle = new NodeLifecycle();
  const config = { NODE_ID: 'n1', NODE_MAX_WAITING: maxWaiting } as NodeManagerConfig;
  const cancelled = new CancelledAttempts(clock);
  const sut = new AdmitInferenceUseCase(store, new SimEngine({ kvBlocks }), config, clock, lifecycle, cancelled);
  return { sut, store, lifecycle, cancelled };
}

const request = (over: Partial<Omit<InferenceRequest, '$typeName' | '$unknown'>> = {}): InferenceRequest =>
  create(InferenceRequestSchema, { requestId: 'r1', model: 'mnemo-tiny', tokens: [104, 105], replySubject: '_INBOX.1', ...over });

/** 300 tokens: one complete 256-token chunk. */
const LONG = Array.from({ length: 300 }, (_, i) => 97 + (i % 26));

describe(AdmitInferenceUseCase.name, () => {
  it('queues a valid request and answers with the node id', () => {
    const { sut, store } = setup();
    expect(sut.execute(new AdmitInferenceCommand(request()))).toBe('n1');
    expect(store.get('r1')?.phase).toBe('waiting');
  });

  it.each<[string, Partial<InferenceRequest>, ErrorCode]>([
    ['unknown model', { model: 'gpt-9' }, ErrorCode.ModelNotFound],
    ['empty prompt', { tokens: [] }, ErrorCode.InvalidRequest],
    ['token outside the vocabulary', { tokens: [1, 261] }, ErrorCode.InvalidRequest],
    ['prompt filling the context', { tokens: new Array(4096).fill(65) }, ErrorCode.PromptTooLong],
    ['no reply subject', { replySubject: '' }, ErrorCode.InvalidRequest],
    ['no request id', { requestId: '' }, ErrorCode.InvalidRequest],
    ['deadline already passed', { deadlineUnixMs: NOW - 1 }, ErrorCode.Timeout],
    ['chunk keys for a prompt without a complete chunk', { chunkKeys: ['0'.repeat(32)] }, ErrorCode.InvalidRequest],
    ['chunk keys missing for a complete chunk', { tokens: LONG }, ErrorCode.InvalidRequest],
    [
      'chunk keys of another tenant',
      { tokens: LONG, tenant: 't1', chunkKeys: chunkKeys('mnemo-tiny', 't2', LONG) },
      ErrorCode.InvalidRequest,
    ],
    ['chunk keys of another model', { tokens: LONG, chunkKeys: chunkKeys('mnemo-small', '', LONG) }, ErrorCode.InvalidRequest],
    ['a draw offset covering the whole prompt', { sampling: create(SamplingParamsSchema, { drawOffset: 2 }) }, ErrorCode.InvalidRequest],
  ])('refuses %s', (_n, over, code) => {
    const { sut, store } = setup();
    expect(() => sut.execute(new AdmitInferenceCommand(request(over)))).toThrow(expect.objectContaining({ code }));
    expect(store.size).toBe(0);
  });

  it.each([
    ['fits exactly: 30 prompt + 35 generated, the last never stored = 64 tokens', 30, 35, true],
    ['one token over the 4-block cache', 30, 36, false],
    ['no max_tokens: the whole context would not fit', 30, 0, false],
  ])('admits by the device KV capacity: %s', (_n, prompt, maxTokens, ok) => {
    const { sut, store } = setup(2, 4);
    const r = request({ tokens: new Array(prompt).fill(65), sampling: create(SamplingParamsSchema, { temperature: 0, maxTokens }) });
    if (ok) expect(sut.execute(new AdmitInferenceCommand(r))).toBe('n1');
    else
      expect(() => sut.execute(new AdmitInferenceCommand(r))).toThrow(
        expect.objectContaining({ code: ErrorCode.PromptTooLong, message: expect.stringMatching(/KV blocks/) }),
      );
    expect(store.size).toBe(ok ? 1 : 0);
  });

  it('admits a failover continuation: a draw offset short of the prompt', () => {
    const { sut, store } = setup();
    sut.execute(
      new AdmitInferenceCommand(
        request({ tokens: [104, 105, 106], sampling: create(SamplingParamsSchema, { drawOffset: 2, maxTokens: 4 }) }),
      ),
    );
    expect(store.get('r1')?.request.sampling?.drawOffset).toBe(2);
  });

  it('accepts chunk keys computed by kv-core for the model, tenant and prompt', () => {
    const { sut, store } = setup();
    sut.execute(new AdmitInferenceCommand(request({ tokens: LONG, tenant: 't1', chunkKeys: chunkKeys('mnemo-tiny', 't1', LONG) })));
    expect(store.size).toBe(1);
  });

  it('refuses an attempt that was cancelled before it arrived, but not another attempt', () => {
    const { sut, store, cancelled } = setup();
    cancelled.remember('r1', 1);
    expect(() => sut.execute(new AdmitInferenceCommand(request({ attempt: 1 })))).toThrow(
      expect.objectContaining({ code: ErrorCode.Cancelled }),
    );
    expect(store.size).toBe(0);
    sut.execute(new AdmitInferenceCommand(request({ attempt: 2 })));
    expect(store.get('r1')?.request.attempt).toBe(2);
  });

  it('refuses a duplicate request id', () => {
    const { sut } = setup();
    sut.execute(new AdmitInferenceCommand(request()));
    expect(() => sut.execute(new AdmitInferenceCommand(request()))).toThrow(expect.objectContaining({ code: ErrorCode.Conflict }));
  });

  it('answers overloaded when the queue is full, so the scheduler tries another node', () => {
    const { sut } = setup(1);
    sut.execute(new AdmitInferenceCommand(request({ requestId: 'a' })));
    expect(() => sut.execute(new AdmitInferenceCommand(request({ requestId: 'b' })))).toThrow(
      expect.objectContaining({ code: ErrorCode.Overloaded }),
    );
  });

  it('answers overloaded while shutting down', () => {
    const { sut, lifecycle } = setup();
    lifecycle.accepting = false;
    expect(() => sut.execute(new AdmitInferenceCommand(request()))).toThrow(expect.objectContaining({ code: ErrorCode.Overloaded }));
  });
});
