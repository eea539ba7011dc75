import { create } from '@bufbuild/protobuf';
import { ErrorCode } from '@mnemo/kv-core';
import { SimEngine } from '@mnemo/engine';
import { InferenceRequestSchema, type InferenceRequest } from '@mnemo/proto';
import { SequenceStore } from '../batching/sequence.store.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import type { Clock } from '@mnemo/service-kit';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import { AdmitInferenceCommand } from './admit-inference.command.js';
import { AdmitInferenceUseCase } from './admit-inference.use-case.js';

const NOW = 1_700_000_000_000;
const clock: Clock = { monotonicMs: () => 0, unixMs: () => NOW };

function setup(maxWaiting = 2) {
  const store = new SequenceStore();
  const lifecycle = new NodeLifecycle();
  const config = { NODE_ID: 'n1', NODE_MAX_WAITING: maxWaiting } as NodeManagerConfig;
  const sut = new AdmitInferenceUseCase(store, new SimEngine(), config, clock, lifecycle);
  return { sut, store, lifecycle };
}

const request = (over: Partial<Omit<InferenceRequest, '$typeName' | '$unknown'>> = {}): InferenceRequest =>
  create(InferenceRequestSchema, { requestId: 'r1', model: 'mnemo-tiny', tokens: [104, 105], replySubject: '_INBOX.1', ...over });

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
  ])('refuses %s', (_n, over, code) => {
    const { sut, store } = setup();
    expect(() => sut.execute(new AdmitInferenceCommand(request(over)))).toThrow(expect.objectContaining({ code }));
    expect(store.size).toBe(0);
  });

  it('refuses a duplicate request id', () => {
    const { sut } = setup();
    sut.execute(new AdmitInferenceCommand(request()));
    expect(() => sut.execute(new AdmitInferenceCommand(request()))).toThrow(expect.objectContaining({ code: ErrorCode.Conflict }));
  });

  it('answers overloaded when the queue is full, so the scheduler tries another node', () => {
    const { sut } = setup(1);
    sut.execute(new AdmitInferenceCommand(request({ requestId: 'a' })));
    expect(() => sut.execute(new AdmitInferenceCommand(request({ requestId: 'b' })))).toThrow(expect.objectContaining({ code: ErrorCode.Overloaded }));
  });

  it('answers overloaded while shutting down', () => {
    const { sut, lifecycle } = setup();
    lifecycle.accepting = false;
    expect(() => sut.execute(new AdmitInferenceCommand(request()))).toThrow(expect.objectContaining({ code: ErrorCode.Overloaded }));
  });
});
