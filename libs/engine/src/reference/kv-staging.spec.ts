import { chunkKeys, ErrorCode } from '@mnemo/kv-core';
import { firstBitDifference } from '../../test/bits.js';
import { decodeAll } from '../../test/decode-all.js';
import { cpuBackend } from '../../test/test-backend.js';
import type { EngineChunkEvent, StagedChunkRank } from '../engine.interface.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const MODEL = 'mnemo-tiny';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const RANK: StagedChunkRank = { priority: 0, dueMs: Infinity, stamp: 0, position: 0 };
const toks = (n: number, salt = 0): number[] => Array.from({ length: n }, (_, i) => (i * 37 + salt * 11 + 5) % 256);
const engine = (kvBlocks = 96) => new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(MODEL)], kvBlocks);

describe('ReferenceEngine staged chunks (prefetched KV promoted to the device)', () => {
  const history = toks(600);
  const prompt = [...history, ...toks(40, 7)];
  const keys = chunkKeys(MODEL, 't', history);
  const all = { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: 640 };

  /** Chunks 0 and 1 of `history` as another node exports them, and a fresh prefill of `prompt` to compare with. */
  async function fixtures() {
    const src = engine();
    await src.prefill([{ seqId: 'src', model: MODEL, tokens: history, sampling: GREEDY, cacheSalt: 't' }]);
    const chunks = [0, 1].map((c) => src.exportChunk('src', c));
    const fresh = engine();
    const [f0] = await fresh.prefill([{ seqId: 'f', model: MODEL, tokens: prompt, sampling: GREEDY }]);
    const expected = await decodeAll(fresh, 'f', f0!.token, 6);
    return { src, chunks, fresh, expected };
  }

  it('a prompt reaching staged chunks takes them as device hits: same tokens, bit-identical KV, no restore', async () => {
    const { src, chunks, fresh, expected } = await fixtures();
    const sut = engine();
    const events: EngineChunkEvent[] = [];
    sut.watchChunks((e) => events.push(e));
    expect(keys.slice(0, 2).map((k, c) => sut.staging.stage(MODEL, k, chunks[c]!, { ...RANK, position: c }))).toEqual([true, true]);
    expect(sut.kvBudget(MODEL).available).toBe(96);
    let restoreAskedAt = -1;
    const [r0] = await sut.prefill([
      { seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't', restore: (d) => ((restoreAskedAt = d), undefined) },
    ]);
    expect(r0).toMatchObject({ cachedTokens: 512, restoredTokens: 0 });
    expect(restoreAskedAt).toBe(512);
    expect(await decodeAll(sut, 'r', r0!.token, 6)).toEqual(expected);
    expect(firstBitDifference(sut.exportKv('r', all), fresh.exportKv('f', all))).toBe(-1);
    expect(sut.staging.stats(MODEL)).toEqual({ staged: 2, adopted: 2, purged: 0, unstaged: 0, chunks: 0 });
    expect(events.filter((e) => e.kind === 'written' && e.seqId === 'r').map((e) => e.key)).toEqual(keys.slice(0, 2));
    await Promise.all([src.close(), fresh.close(), sut.close()]);
  });

  it('after a partial device hit the staged chunk supplies the rest of its blocks', async () => {
    const { src, chunks, fresh, expected } = await fixtures();
    const sut = engine();
    await sut.prefill([{ seqId: 'head', model: MODEL, tokens: history.slice(0, 100), sampling: GREEDY, cacheSalt: 't' }]);
    sut.release('head');
    keys.slice(0, 2).forEach((k, c) => sut.staging.stage(MODEL, k, chunks[c]!, RANK));
    const [r0] = await sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't' }]);
    expect(r0).toMatchObject({ cachedTokens: 512, restoredTokens: 0 });
    expect(await decodeAll(sut, 'r', r0!.token, 6)).toEqual(expected);
    expect(firstBitDifference(sut.exportKv('r', all), fresh.exportKv('f', all))).toBe(-1);
    await Promise.all([src.close(), fresh.close(), sut.close()]);
  });

  it('a sequence needing the blocks purges staged chunks, later chunks first, and what stays is still exact', async () => {
    const { src, chunks, fresh } = await fixtures();
    // 32 blocks staged + 8 free: another prompt of 20 blocks takes one staged chunk.
    const sut = engine(40);
    keys.slice(0, 2).forEach((k, c) => sut.staging.stage(MODEL, k, chunks[c]!, { ...RANK, position: c }));
    await sut.prefill([{ seqId: 'other', model: MODEL, tokens: toks(320, 3), sampling: GREEDY, cacheSalt: 't' }]);
    expect(sut.staging.stats(MODEL)).toMatchObject({ purged: 1, chunks: 1 });
    sut.release('other');
    const [r0] = await sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't' }]);
    expect(r0!.cachedTokens).toBe(256);
    expect(firstBitDifference(sut.exportKv('r', all), fresh.exportKv('f', all))).toBe(-1);
    await Promise.all([src.close(), fresh.close(), sut.close()]);
  });

  it('stages only into free blocks, refuses a bad payload before taking anything, and unstages', async () => {
    const { src, chunks, fresh } = await fixtures();
    const sut = engine(20);
    expect(() => sut.staging.stage(MODEL, keys[0]!, chunks[0]!.subarray(1), RANK)).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidRequest }),
    );
    expect(() => sut.staging.stage('nope', keys[0]!, chunks[0]!, RANK)).toThrow(expect.objectContaining({ code: ErrorCode.ModelNotFound }));
    expect(sut.staging.stage(MODEL, keys[0]!, chunks[0]!, RANK)).toBe(true);
    expect(sut.staging.stage(MODEL, keys[0]!, chunks[0]!, RANK)).toBe(false);
    expect(sut.staging.stage(MODEL, keys[1]!, chunks[1]!, RANK)).toBe(false);
    expect(sut.staging.unstage(MODEL, keys[0]!)).toBe(true);
    expect(sut.staging.unstage(MODEL, keys[0]!)).toBe(false);
    expect(sut.staging.stats(MODEL)).toEqual({ staged: 1, adopted: 0, purged: 0, unstaged: 1, chunks: 0 });
    const [r0] = await sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt.slice(0, 300), sampling: GREEDY, cacheSalt: 't' }]);
    expect(r0!.cachedTokens).toBe(0);
    await Promise.all([src.close(), fresh.close(), sut.close()]);
  });
});
