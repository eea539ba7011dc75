import { SessionTailTracker, type SessionTail, type TailChunkEvent } from './session-tail.tracker.js';

const written = (seqId: string, chunk: number, key: string): TailChunkEvent => ({ kind: 'written', seqId, chunk, key });
const partial = (seqId: string, chunk: number, key: string, tokens: number): TailChunkEvent => ({
  kind: 'partial',
  seqId,
  chunk,
  key,
  tokens,
});

describe(SessionTailTracker.name, () => {
  it.each<[string, string[], TailChunkEvent[], SessionTail]>([
    ['prompt chunks only, nothing written', ['a'], [], { chunkKeys: ['a'], partialKey: '', tokens: 256 }],
    [
      'the reply completed a chunk, then left a partial one',
      ['a'],
      [written('r', 1, 'b'), partial('r', 2, 'p', 48)],
      { chunkKeys: ['a', 'b'], partialKey: 'p', tokens: 560 },
    ],
    [
      'a partial chunk right after the prompt',
      ['a', 'b'],
      [partial('r', 2, 'p', 160)],
      { chunkKeys: ['a', 'b'], partialKey: 'p', tokens: 672 },
    ],
    [
      'a chunk written out of order is not a continuation',
      ['a'],
      [written('r', 2, 'c')],
      { chunkKeys: ['a'], partialKey: '', tokens: 256 },
    ],
    [
      'a partial chunk that is not the next one is left out',
      ['a'],
      [partial('r', 3, 'p', 16)],
      { chunkKeys: ['a'], partialKey: '', tokens: 256 },
    ],
    [
      "another sequence's events are not this one's",
      ['a'],
      [written('o', 1, 'b'), partial('o', 2, 'p', 16)],
      { chunkKeys: ['a'], partialKey: '', tokens: 256 },
    ],
  ])('%s', (_name, promptKeys, events, want) => {
    const sut = new SessionTailTracker();
    for (const e of events) sut.onChunk(e);
    expect(sut.ended('r', promptKeys)).toEqual(want);
  });

  it('forgets a sequence once it ended', () => {
    const sut = new SessionTailTracker();
    sut.onChunk(written('r', 1, 'b'));
    sut.ended('r', ['a']);
    expect(sut.size).toBe(0);
  });
});
