import { blockKeys, chunkKeys, ErrorCode, layerPieces, MnemoError, padChunkPayload, type KvRowGeometry } from '@mnemo/kv-core';
import { bits } from '../../test/bits.js';
import { decodeAll } from '../../test/decode-all.js';
import { cpuBackend } from '../../test/test-backend.js';
import type { EngineChunkEvent, KvRestorePlan } from '../engine.interface.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { ReferenceEngine } from './reference.engine.js';

const MODEL = 'mnemo-tiny';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const toks = (n: number, salt = 0): number[] => Array.from({ length: n }, (_, i) => (i * 37 + salt * 11 + 5) % 256);
const engine = (kvBlocks = 96) => new ReferenceEngine(cpuBackend(), [syntheticWeightsFor(MODEL)], kvBlocks);

/** A plan that assembles each layer from exported chunk payloads, as the KV store does from its tiers. */
function planFrom(
  chunks: Float32Array[],
  g: KvRowGeometry,
  from: number,
  until: number,
  fail?: number,
): KvRestorePlan & { loaded: number[]; result?: boolean } {
  const plan = {
    until,
    loaded: [] as number[],
    result: undefined as boolean | undefined,
    async load(layer: number): Promise<Float32Array> {
      await new Promise((r) => setImmediate(r));
      if (layer === fail) throw new Error('CRC mismatch');
      plan.loaded.push(layer);
      const out = new Float32Array(2 * (until - from) * g.rowElems);
      for (const p of layerPieces(g, layer, from, until)) out.set(chunks[p.chunk]!.subarray(p.src, p.src + p.len), p.dst);
      return out;
    },
    done(ok: boolean) {
      plan.result = ok;
    },
  };
  return plan;
}

describe('ReferenceEngine KV restore and chunk events', () => {
  const history = toks(600);
  const prompt = [...history, ...toks(40, 7)];

  /** The restored sequence `r` holds the whole prompt's KV (640 tokens) of the fresh prefill `f`, bit for bit. */
  function expectSameKv(sut: ReferenceEngine, fresh: ReferenceEngine, g: KvRowGeometry): void {
    const all = { layerStart: 0, layerEnd: g.layers, tokenStart: 0, tokenEnd: 640 };
    expect(bits(sut.exportKv('r', all))).toEqual(bits(fresh.exportKv('f', all)));
  }

  async function source() {
    const src = engine();
    const events: EngineChunkEvent[] = [];
    src.watchChunks((e) => events.push(e));
    await src.prefill([{ seqId: 'src', model: MODEL, tokens: history, sampling: GREEDY, cacheSalt: 't' }]);
    const chunks = [0, 1].map((c) => src.exportChunk('src', c));
    const c = src.modelConfig(MODEL);
    return { src, events, chunks, g: { layers: c.layers, rowElems: c.kvHeads * c.headDim } };
  }

  it('announces every whole chunk a sharing sequence writes, under its chunk key', async () => {
    const { src, events } = await source();
    const blocks = blockKeys(MODEL, 't', history);
    expect(events).toEqual(
      chunkKeys(MODEL, 't', history).map((key, chunk) => ({
        kind: 'written',
        model: MODEL,
        key,
        seqId: 'src',
        chunk,
        superseded: blocks.slice(16 * chunk, 16 * chunk + 15),
        ids: history.slice(256 * chunk, 256 * (chunk + 1)),
        parentKey: chunk === 0 ? null : blocks[16 * chunk - 1],
      })),
    );
    await src.close();
  });

  it('exports a whole or partial chunk into a given buffer, bit for bit as into a fresh one', async () => {
    const { src, chunks } = await source();
    const n = chunks[0]!.length;
    const into = new Float32Array(n).fill(NaN);
    expect(src.exportChunk('src', 1, undefined, into)).toBe(into);
    expect(bits(into)).toEqual(bits(chunks[1]!));
    into.fill(NaN);
    expect(bits(src.exportChunk('src', 2, 600 - 512, into))).toEqual(bits(src.exportChunk('src', 2, 600 - 512)));
    expect(() => src.exportChunk('src', 0, undefined, new Float32Array(n - 1))).toThrow(
      expect.objectContaining({ code: ErrorCode.InvalidRequest }),
    );
    await src.close();
  });

  it('a prompt restored layer by layer from exported chunks decodes what a fresh prefill decodes, with identical KV', async () => {
    const { src, chunks, g } = await source();
    const fresh = engine();
    const [f0] = await fresh.prefill([{ seqId: 'f', model: MODEL, tokens: prompt, sampling: GREEDY }]);
    const expected = await decodeAll(fresh, 'f', f0!.token, 6);

    const sut = engine();
    const plan = planFrom(chunks, g, 0, 512);
    const [r0] = await sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't', restore: () => plan }]);
    expect(r0).toMatchObject({ cachedTokens: 512, restoredTokens: 512 });
    expect(plan.loaded).toEqual([0, 1, 2, 3]);
    expect(plan.result).toBe(true);
    expect(await decodeAll(sut, 'r', r0!.token, 6)).toEqual(expected);
    expectSameKv(sut, fresh, g);
    await Promise.all([src.close(), fresh.close(), sut.close()]);
  });

  it('restores after a partial device hit, from the middle of a chunk', async () => {
    const { src, chunks, g } = await source();
    const sut = engine();
    // The device holds the first 100 tokens' whole blocks (96 tokens).
    await sut.prefill([{ seqId: 'head', model: MODEL, tokens: history.slice(0, 100), sampling: GREEDY, cacheSalt: 't' }]);
    sut.release('head');
    let asked = -1;
    const [r0] = await sut.prefill([
      {
        seqId: 'r',
        model: MODEL,
        tokens: prompt,
        sampling: GREEDY,
        cacheSalt: 't',
        restore: (deviceTokens) => {
          asked = deviceTokens;
          return planFrom(chunks, g, deviceTokens, 512);
        },
      },
    ]);
    expect(asked).toBe(96);
    expect(r0).toMatchObject({ cachedTokens: 512, restoredTokens: 416 });
    const fresh = engine();
    await fresh.prefill([{ seqId: 'f', model: MODEL, tokens: prompt, sampling: GREEDY }]);
    expectSameKv(sut, fresh, g);
    await Promise.all([src.close(), fresh.close(), sut.close()]);
  });

  it('a sequence released while its restore runs names nothing the pass wrote, and exports only what it held before', async () => {
    const { src, chunks, g } = await source();
    const sut = engine();
    const exported: Array<{ seqId: string; chunk: number; tokens: number; kv: Float32Array }> = [];
    sut.watchChunks((e) => {
      if (e.kind === 'partial')
        exported.push({ seqId: e.seqId, chunk: e.chunk, tokens: e.tokens, kv: sut.exportChunk(e.seqId, e.chunk, e.tokens) });
    });
    await sut.prefill([{ seqId: 'head', model: MODEL, tokens: history.slice(0, 100), sampling: GREEDY, cacheSalt: 't' }]);
    sut.release('head');
    const plan = planFrom(chunks, g, 96, 512);
    const load = plan.load.bind(plan);
    plan.load = async (layer) => {
      if (layer === 1) sut.release('r');
      return load(layer);
    };
    await sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't', restore: () => plan }]);
    expect(sut.hasSequence('r')).toBe(false);
    // Layers 1.. of the restored rows were never imported: the device must not offer them to anyone.
    expect(sut.cachedTokens({ seqId: 'x', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't' })).toBe(96);
    expect(exported.map(({ seqId, chunk, tokens }) => ({ seqId, chunk, tokens }))).toEqual([
      { seqId: 'head', chunk: 0, tokens: 96 },
      { seqId: 'r', chunk: 0, tokens: 96 },
    ]);
    expect(Buffer.from(exported[1]!.kv.buffer).equals(Buffer.from(exported[0]!.kv.buffer))).toBe(true);
    await Promise.all([src.close(), sut.close()]);
  });

  it('a failed load fails the prefill and leaves nothing behind: no blocks held, nothing shared', async () => {
    const { src, chunks, g } = await source();
    const sut = engine();
    const plan = planFrom(chunks, g, 0, 512, 2);
    await expect(
      sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't', restore: () => plan }]),
    ).rejects.toThrow(/CRC/);
    expect(plan.result).toBe(false);
    expect(sut.hasSequence('r')).toBe(false);
    expect(sut.kvBudget(MODEL)).toEqual({ capacity: 96, available: 96 });
    expect(sut.cachedTokens({ seqId: 'x', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't' })).toBe(0);
    await Promise.all([src.close(), sut.close()]);
  });

  it('a load failing with data_loss drops only its sequence: the batch goes on, nothing of it is kept or shared', async () => {
    const { src, chunks, g } = await source();
    const other = toks(300, 3);
    const alone = engine();
    const [plainAlone] = await alone.prefill([{ seqId: 'p', model: MODEL, tokens: other, sampling: GREEDY, cacheSalt: 'u' }]);
    const [restoredAlone] = await alone.prefill([
      { seqId: 'g', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't', restore: () => planFrom(chunks, g, 0, 512) },
    ]);
    const sut = engine(160);
    const bad = planFrom(chunks, g, 0, 512);
    const load = bad.load.bind(bad);
    bad.load = async (layer) => (layer === 2 ? Promise.reject(new MnemoError(ErrorCode.DataLoss, 'peer past its deadline')) : load(layer));
    const outs = await sut.prefill([
      { seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't', restore: () => bad },
      { seqId: 'p', model: MODEL, tokens: other, sampling: GREEDY, cacheSalt: 'u' },
    ]);
    expect(outs.map((o) => [o.seqId, o.token])).toEqual([['p', plainAlone!.token]]);
    expect(bad.result).toBe(false);
    expect(sut.hasSequence('r')).toBe(false);
    expect(sut.cachedTokens({ seqId: 'x', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't' })).toBe(0);
    // Run again, recomputing: the token a successful restore gives.
    const [again] = await sut.prefill([{ seqId: 'r', model: MODEL, tokens: prompt, sampling: GREEDY, cacheSalt: 't' }]);
    expect(again).toMatchObject({ token: restoredAlone!.token, cachedTokens: 0 });
    await Promise.all([src.close(), sut.close(), alone.close()]);
  });

  it('refuses a plan that would leave no token to compute', async () => {
    const { src, chunks, g } = await source();
    const sut = engine();
    const bad = {
      seqId: 'r',
      model: MODEL,
      tokens: history.slice(0, 512),
      sampling: GREEDY,
      cacheSalt: 't',
      restore: () => planFrom(chunks, g, 0, 512),
    };
    await expect(sut.prefill([bad])).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
    expect(sut.kvUsage()).toBe(0);
    await Promise.all([src.close(), sut.close()]);
  });

  it('reports chunks the device drops', async () => {
    const sut = engine(40);
    const events: EngineChunkEvent[] = [];
    sut.watchChunks((e) => events.push(e));
    await sut.prefill([{ seqId: 'a', model: MODEL, tokens: toks(300), sampling: GREEDY, cacheSalt: 't' }]);
    sut.release('a');
    await sut.prefill([{ seqId: 'b', model: MODEL, tokens: toks(600, 3), sampling: GREEDY }]);
    const [key] = chunkKeys(MODEL, 't', toks(300));
    const blocks = blockKeys(MODEL, 't', toks(300));
    expect(events).toEqual([
      {
        kind: 'written',
        model: MODEL,
        key,
        seqId: 'a',
        chunk: 0,
        superseded: blocks.slice(0, 15),
        ids: toks(300).slice(0, 256),
        parentKey: null,
      },
      // 300 tokens: two whole blocks of chunk 1 left with the sequence.
      {
        kind: 'partial',
        model: MODEL,
        key: blocks[17],
        seqId: 'a',
        chunk: 1,
        tokens: 32,
        superseded: [blocks[16]],
        ids: toks(300).slice(256, 288),
        parentKey: key,
      },
      { kind: 'evicted', model: MODEL, key },
    ]);
    await sut.close();
  });

  it('exports a partial chunk, as it is released, in the whole chunk layout', async () => {
    const sut = engine();
    const tokens = toks(300);
    await sut.prefill([{ seqId: 'a', model: MODEL, tokens, sampling: GREEDY, cacheSalt: 't' }]);
    const c = sut.modelConfig(MODEL);
    const g = { layers: c.layers, rowElems: c.kvHeads * c.headDim };
    const rows = sut.exportKv('a', { layerStart: 0, layerEnd: c.layers, tokenStart: 256, tokenEnd: 288 });
    let exported: Float32Array | undefined;
    sut.watchChunks((e) => {
      if (e.kind === 'partial') exported = sut.exportChunk(e.seqId, e.chunk, e.tokens);
    });
    sut.release('a');
    expect(exported).toBeDefined();
    expect(bits(exported!)).toEqual(bits(padChunkPayload(g, rows, 32)));
    await sut.close();
  });
});
