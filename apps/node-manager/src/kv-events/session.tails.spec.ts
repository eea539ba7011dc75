import { create } from '@bufbuild/protobuf';
import type { EngineChunkEvent } from '@mnemo/engine';
import { InferenceRequestSchema } from '@mnemo/proto';
import { SessionTails, type SessionTailReport } from './session.tails.js';

const request = (requestId: string, chunkKeys: string[], sessionId = 's') =>
  create(InferenceRequestSchema, { requestId, tenant: 't', sessionId, model: 'm', chunkKeys });
const written = (seqId: string, chunk: number, key: string): EngineChunkEvent => ({
  kind: 'written',
  model: 'm',
  key,
  seqId,
  chunk,
  superseded: [],
});
const partial = (seqId: string, chunk: number, key: string, tokens: number): EngineChunkEvent => ({
  kind: 'partial',
  model: 'm',
  key,
  seqId,
  chunk,
  tokens,
  superseded: [],
});

describe(SessionTails.name, () => {
  it.each<[string, string[], EngineChunkEvent[], Partial<SessionTailReport>]>([
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
      [written('other', 1, 'b'), partial('other', 2, 'p', 16)],
      { chunkKeys: ['a'], partialKey: '', tokens: 256 },
    ],
  ])('%s', (_name, promptKeys, events, expected) => {
    const out: SessionTailReport[] = [];
    const sut = new SessionTails((t) => out.push(t));
    for (const e of events) sut.onChunk(e);
    sut.ended(request('r', promptKeys));
    expect(out).toEqual([{ tenant: 't', sessionId: 's', model: 'm', ...expected }]);
  });

  it('reports nothing for a request without a session, and forgets every ended sequence', () => {
    const out: SessionTailReport[] = [];
    const sut = new SessionTails((t) => out.push(t));
    sut.onChunk(partial('r', 0, 'p', 16));
    sut.onChunk({ kind: 'evicted', model: 'm', key: 'x' });
    sut.ended(request('r', [], ''));
    expect(out).toEqual([]);
    expect(sut.size).toBe(0);
  });
});
