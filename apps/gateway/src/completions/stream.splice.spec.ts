import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { FinishReason, TokenEventSchema, type TokenEvent } from '@mnemo/proto';
import { StreamSplice } from './stream.splice.js';

type EventInit = Exclude<MessageInitShape<typeof TokenEventSchema>, TokenEvent>;
const ev = (seq: number, tokens: number[], extra: EventInit = {}): TokenEvent =>
  create(TokenEventSchema, { requestId: 'r', seq, tokens, ...extra });
const usage = (promptTokens: number, completionTokens: number, cachedTokens: number) => ({ promptTokens, completionTokens, cachedTokens });

describe(StreamSplice.name, () => {
  it('passes a request that never failed over through unchanged', () => {
    const sut = new StreamSplice(10);
    const first = ev(0, [65], { usage: usage(10, 1, 4) });
    expect(sut.map(first)).toBe(first);
    const done = ev(1, [66], { done: true, finishReason: FinishReason.LENGTH, usage: usage(10, 2, 4) });
    expect(sut.map(done)).toBe(done);
    expect(sut.streamed).toEqual([65, 66]);
  });

  it.each<[string, number[], number, 'next' | 'repeat' | 'gap']>([
    ['the first event', [], 0, 'next'],
    ['the one after the last mapped', [0, 1], 2, 'next'],
    ['a redelivery', [0, 1], 1, 'repeat'],
    ['past a lost event', [0, 1], 3, 'gap'],
    ['a lost first event', [], 1, 'gap'],
  ])('orders %s', (_n, mapped, seq, want) => {
    const sut = new StreamSplice(10);
    for (const m of mapped) sut.map(ev(m, [65]));
    expect(sut.order(ev(seq, [66]))).toBe(want);
  });

  it('orders a continuation’s events from its own 0', () => {
    const sut = new StreamSplice(10);
    sut.map(ev(0, [65]));
    sut.map(ev(1, [66]));
    sut.continued();
    expect(sut.order(ev(0, [67]))).toBe('next');
    expect(sut.order(ev(2, [67]))).toBe('gap');
  });

  it('numbers a continuation’s events on and reports usage of the original prompt and every token', () => {
    const sut = new StreamSplice(10);
    sut.map(ev(0, [65], { usage: usage(10, 1, 4) }));
    sut.map(ev(1, [66]));
    sut.continued();
    // The continuation's prompt is 10 + 2 tokens, 8 of them cached on its node.
    expect(sut.map(ev(0, [67], { usage: usage(12, 1, 8) }))).toMatchObject({ seq: 2, tokens: [67], usage: usage(10, 3, 4) });
    expect(sut.map(ev(1, [68]))).toMatchObject({ seq: 3 });
    expect(sut.map(ev(2, [], { done: true, usage: usage(12, 3, 8) }))).toMatchObject({ seq: 4, done: true, usage: usage(10, 5, 4) });
    expect(sut.streamed).toEqual([65, 66, 67, 68]);
    expect(sut.failovers).toBe(1);
  });

  it('chains failovers: each continuation follows the last event handed on', () => {
    const sut = new StreamSplice(5);
    sut.continued(); // down before the first token
    expect(sut.map(ev(0, [65], { usage: usage(5, 1, 0) }))).toMatchObject({ seq: 0, usage: usage(5, 1, 0) });
    sut.continued();
    expect(sut.map(ev(0, [66], { usage: usage(6, 1, 5) }))).toMatchObject({ seq: 1, usage: usage(5, 2, 5) });
    expect(sut.failovers).toBe(2);
  });

  it('ends a stream whose whole budget was streamed with length', () => {
    const sut = new StreamSplice(3);
    sut.map(ev(0, [65], { usage: usage(3, 1, 0) }));
    sut.map(ev(1, [66]));
    expect(sut.lengthDone('r')).toMatchObject({ seq: 2, done: true, finishReason: FinishReason.LENGTH, tokens: [], usage: usage(3, 2, 0) });
  });
});
