import { chunkKeys, ErrorCode } from '@mnemo/kv-core';
import type { StagedChunkRank } from '../engine.interface.js';
import { SimEngine, type SimStep } from './sim.engine.js';
import { chunkPayload, modelSeed, type SimKvLayout } from './sim-kv.content.js';

const layout: SimKvLayout = { layers: 4, rowElems: 8 };
const model = 'mnemo-tiny';
const sampling = { temperature: 0, topP: 1, seed: 1 };
const zeroCost = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 };
const prompt = Array.from({ length: 600 }, (_, i) => 32 + ((i * 7) % 90));
const RANK: StagedChunkRank = { priority: 0, dueMs: Infinity, stamp: 0, position: 0 };
const keys = chunkKeys(model, 't', prompt);
const payload = (c: number) => chunkPayload(modelSeed(model), prompt, c, layout);

describe(`${SimEngine.name} staged chunks`, () => {
  it('a staged chunk is a device hit: only the rest of the prompt is computed, and it exports as computed', async () => {
    const steps: SimStep[] = [];
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout, onStep: (s) => steps.push(s) });
    expect(sut.staging.stage(model, keys[0]!, payload(0), RANK)).toBe(true);
    expect(sut.staging.stage(model, keys[1]!, payload(1), RANK)).toBe(true);
    const [out] = await sut.prefill([{ seqId: 'r', model, tokens: prompt, sampling, cacheSalt: 't' }]);
    expect(out).toMatchObject({ cachedTokens: 512, restoredTokens: 0 });
    expect(sut.staging.stats(model)).toMatchObject({ staged: 2, adopted: 2, chunks: 0 });
    expect(sut.exportChunk('r', 1)).toEqual(payload(1));
  });

  it('stages nothing without KV bytes, and refuses a payload of the wrong size', () => {
    expect(new SimEngine({ cost: zeroCost }).staging.stage(model, keys[0]!, payload(0), RANK)).toBe(false);
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    expect(() => sut.staging.stage(model, keys[0]!, payload(0).subarray(8), RANK)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidRequest }),
    );
    expect(sut.staging.stats(model).chunks).toBe(0);
  });

  it('a full device purges staged chunks for a running sequence instead of failing it', async () => {
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout, kvBlocks: 40 });
    sut.staging.stage(model, keys[0]!, payload(0), RANK);
    sut.staging.stage(model, keys[1]!, payload(1), { ...RANK, position: 1 });
    expect(sut.kvBudget(model)).toEqual({ capacity: 40, available: 40 });
    const other = Array.from({ length: 320 }, (_, i) => 40 + (i % 50));
    await sut.prefill([{ seqId: 'o', model, tokens: other, sampling, cacheSalt: 't' }]);
    expect(sut.staging.stats(model)).toMatchObject({ purged: 1, chunks: 1 });
    sut.release('o');
    const [out] = await sut.prefill([{ seqId: 'r', model, tokens: prompt, sampling, cacheSalt: 't' }]);
    expect(out!.cachedTokens).toBe(256);
  });
});
