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
  // The tail itself is kv-core's SessionTailTracker, whose spec holds the cases; what the node adds
  // is the wiring: the engine's chunk events reach the tracker, evictions do not, and the report
  // carries the request's tenant, session and model.
  it("reports the tail of an ended request with the request's tenant, session and model", () => {
    const out: SessionTailReport[] = [];
    const sut = new SessionTails((t) => out.push(t));
    sut.onChunk(written('r', 1, 'b'));
    sut.onChunk({ kind: 'evicted', model: 'm', key: 'b' });
    sut.onChunk(partial('r', 2, 'p', 48));
    sut.ended(request('r', ['a']));
    expect(out).toEqual([{ tenant: 't', sessionId: 's', model: 'm', chunkKeys: ['a', 'b'], partialKey: 'p', tokens: 560 }]);
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
