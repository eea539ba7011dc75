import { decodeVllmEventBatch, encodeVllmEventBatch, type VllmEventBatch } from '@mnemo/service-kit';
import { withoutTokenIds } from './vllm-events.wiring.js';

describe('NODE_VLLM_EVENTS_TOKEN_IDS=off', () => {
  const batch: VllmEventBatch = {
    ts: 1.5,
    events: [
      {
        type: 'BlockStored',
        blockHashes: [1n],
        parentBlockHash: null,
        tokenIds: [7, 8, 9],
        blockSize: 16,
        loraId: null,
        medium: 'GPU',
        loraName: null,
      },
      { type: 'BlockRemoved', blockHashes: [2n], medium: 'CPU' },
      { type: 'AllBlocksCleared' },
    ],
  };

  it('empties every BlockStored token_ids, keeps its hashes and every other event, and still decodes as vLLM', () => {
    const out = withoutTokenIds(batch);
    expect(out.events.map((e) => (e.type === 'BlockStored' ? e.tokenIds : null))).toEqual([[], null, null]);
    expect(out.events.slice(1)).toEqual(batch.events.slice(1));
    const wire = decodeVllmEventBatch(encodeVllmEventBatch(out));
    expect(wire.events[0]).toMatchObject({ type: 'BlockStored', tokenIds: [] });
    expect(Buffer.from(encodeVllmEventBatch(out)).length).toBeLessThan(Buffer.from(encodeVllmEventBatch(batch)).length);
  });
});
