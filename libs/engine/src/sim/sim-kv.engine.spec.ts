import { jest } from '@jest/globals';
import { CHUNK_TOKENS, ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { EngineChunkEvent, KvRestorePlan, PrefillInput } from '../engine.interface.js';
import { SimEngine, type SimStep } from './sim.engine.js';
import { chunkPayload, modelSeed, type SimKvLayout } from './sim-kv.content.js';

const layout: SimKvLayout = { layers: 4, rowElems: 8 };
const model = 'mnemo-tiny';
const sampling = { temperature: 0, topP: 1, seed: 1 };
const zeroCost = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 };
const prompt = Array.from({ length: 600 }, (_, i) => 32 + ((i * 7) % 90));
const input = (seqId: string, extra: Partial<PrefillInput> = {}): PrefillInput => ({
  seqId,
  model,
  tokens: prompt,
  sampling,
  cacheSalt: 't',
  ...extra,
});

/** A restore plan over whole exported chunks (what the KV store's tiers hand back), layer by layer. */
function planFrom(chunks: readonly Float32Array[], until: number, opts: { tamper?: (layer: number, data: Float32Array) => void } = {}) {
  const calls = { loads: [] as number[], done: [] as Array<[boolean, number | undefined]> };
  const stride = 2 * CHUNK_TOKENS * layout.rowElems;
  const plan: KvRestorePlan = {
    until,
    load(layer) {
      calls.loads.push(layer);
      const out = new Float32Array(2 * until * layout.rowElems);
      // [K|V][token][row] over the restored positions, from each chunk's [layer][K|V][token][row].
      for (let kv = 0; kv < 2; kv++) {
        for (let c = 0; c * CHUNK_TOKENS < until; c++) {
          const n = Math.min(CHUNK_TOKENS, until - c * CHUNK_TOKENS);
          const src = chunks[c]!.subarray(
            layer * stride + kv * CHUNK_TOKENS * layout.rowElems,
            layer * stride + (kv * CHUNK_TOKENS + n) * layout.rowElems,
          );
          out.set(src, (kv * until + c * CHUNK_TOKENS) * layout.rowElems);
        }
      }
      opts.tamper?.(layer, out);
      return Promise.resolve(out);
    },
    done: (ok, blocked) => void calls.done.push([ok, blocked]),
  };
  return { plan, calls };
}

/** Node A prefills the prompt and exports its two whole chunks, as the KV store does on `written`. */
async function exportedChunks(): Promise<Float32Array[]> {
  const a = new SimEngine({ cost: zeroCost, kvBytes: layout });
  const written: EngineChunkEvent[] = [];
  const payloads: Float32Array[] = [];
  a.watchChunks((e) => {
    written.push(e);
    if (e.kind === 'written') payloads[e.chunk] = a.exportChunk(e.seqId, e.chunk)!;
  });
  await a.prefill([input('a')]);
  expect(written.map((e) => e.kind === 'written' && e.chunk)).toEqual([0, 1]);
  return payloads;
}

describe(`${SimEngine.name} with KV bytes`, () => {
  it('keeps no KV bytes unless asked (existing sim uses are unchanged)', async () => {
    const sut = new SimEngine({ cost: zeroCost });
    const restore = jest.fn(() => undefined);
    await sut.prefill([input('x', { restore })]);
    expect(sut.kvLayout(model)).toBeUndefined();
    expect(sut.exportChunk('x', 0)).toBeUndefined();
    expect(restore).not.toHaveBeenCalled();
  });

  it.each([
    ['zero layers', { layers: 0, rowElems: 8 }],
    ['fractional row', { layers: 4, rowElems: 1.5 }],
  ])('refuses a layout with %s', (_n, bad) => {
    expect(() => new SimEngine({ kvBytes: bad })).toThrow(RangeError);
  });

  it('exports chunks whose bytes depend on the whole token history, the position and the model', async () => {
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    await sut.prefill([input('x')]);
    const c0 = sut.exportChunk('x', 0)!;
    expect(sut.kvLayout(model)).toEqual(layout);
    expect(c0).toHaveLength(layout.layers * 2 * CHUNK_TOKENS * layout.rowElems);
    expect(c0).toEqual(chunkPayload(modelSeed(model), prompt, 0, layout));
    expect(sut.exportChunk('x', 2)).toBeUndefined(); // 600 tokens: chunk 2 is not whole
    const otherHistory = [99, ...prompt.slice(1)];
    expect(chunkPayload(modelSeed(model), otherHistory, 1, layout)).not.toEqual(sut.exportChunk('x', 1));
    expect(chunkPayload(modelSeed('mnemo-small'), prompt, 0, layout)).not.toEqual(c0);
  });

  it('restores a prefix exported by another engine: same token, the restored chunks export identically', async () => {
    const chunks = await exportedChunks();
    const fresh = await new SimEngine({ cost: zeroCost, kvBytes: layout }).prefill([input('ref')]);
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    const { plan, calls } = planFrom(chunks, 512);
    const [out] = await sut.prefill([input('b', { restore: (device) => (device === 0 ? plan : undefined) })]);
    expect(out).toMatchObject({ token: fresh[0]!.token, cachedTokens: 512, restoredTokens: 512 });
    expect(calls.loads).toEqual([0, 1, 2, 3]);
    expect(calls.done).toEqual([[true, expect.any(Number)]]);
    expect(sut.exportChunk('b', 0)).toEqual(chunks[0]);
    expect(sut.exportChunk('b', 1)).toEqual(chunks[1]);
    // The restored blocks are device-cached now: the next turn attaches them.
    expect(sut.cachedTokens(input('c'))).toBe(592);
  });

  it.each([
    ['one flipped bit', (layer: number, d: Float32Array) => layer === 2 && (new Uint32Array(d.buffer)[100]! ^= 1)],
    [
      'another history',
      (layer: number, d: Float32Array) =>
        layer === 0 && d.set(chunkPayload(modelSeed(model), [1, ...prompt.slice(1)], 0, layout).subarray(0, 10)),
    ],
  ])('drops the sequence of a restore with %s (no output, plan told), keeps nothing, and recomputes after', async (_n, tamper) => {
    const chunks = await exportedChunks();
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    const { plan, calls } = planFrom(chunks, 512, { tamper });
    await expect(sut.prefill([input('b', { restore: () => plan })])).resolves.toEqual([]);
    expect(calls.done).toEqual([[false, expect.any(Number)]]);
    expect(sut.activeSequences).toBe(0);
    expect(sut.cachedTokens(input('c'))).toBe(0); // nothing of the failed restore is served as cached
    const [retry] = await sut.prefill([input('b')]);
    expect(retry).toMatchObject({ cachedTokens: 0, restoredTokens: 0 });
  });

  it.each([
    [
      'a load rejected with data_loss (a peer past its deadline)',
      (): Promise<Float32Array> => Promise.reject(new MnemoError(ErrorCode.DataLoss, 'peer gave no chunk')),
    ],
    ['a load that arrives late and corrupt', async (): Promise<Float32Array> => new Float32Array(2 * 512 * layout.rowElems).fill(1)],
  ])('a batch goes on without the one sequence whose restore failed: %s', async (_n, badLoad) => {
    const chunks = await exportedChunks();
    const other = Array.from({ length: 300 }, (_, i) => 40 + ((i * 3) % 80));
    const alone = await new SimEngine({ cost: zeroCost, kvBytes: layout }).prefill([input('ref', { tokens: other })]);
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    const good = planFrom(chunks, 512);
    const bad = planFrom(chunks, 512);
    bad.plan.load = (layer) => (layer === 1 ? badLoad() : good.plan.load(layer));
    const outs = await sut.prefill([
      input('bad', { restore: () => bad.plan }),
      input('plain', { tokens: other, cacheSalt: 'u' }),
      input('good', { restore: () => good.plan }),
    ]);
    expect(outs.map((o) => o.seqId)).toEqual(['plain', 'good']);
    expect(outs[0]!.token).toBe(alone[0]!.token);
    expect(outs[1]).toMatchObject({ cachedTokens: 512, restoredTokens: 512 });
    expect(bad.calls.done).toEqual([[false, expect.any(Number)]]);
    expect(good.calls.done).toEqual([[true, expect.any(Number)]]);
    expect(sut.activeSequences).toBe(2);
    // The dropped sequence runs again, recomputing, with the same first token as its restoring twin.
    const [again] = await sut.prefill([input('bad', { cacheSalt: 'v' })]);
    expect(again).toMatchObject({ token: outs[1]!.token, cachedTokens: 0 });
  });

  it('a restore failing with anything but data_loss still fails the whole pass', async () => {
    const chunks = await exportedChunks();
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    const { plan } = planFrom(chunks, 512);
    plan.load = () => Promise.reject(new RangeError('bug'));
    await expect(sut.prefill([input('b', { restore: () => plan }), input('c', { cacheSalt: 'u' })])).rejects.toThrow(RangeError);
    expect(sut.activeSequences).toBe(0);
  });

  it('refuses a plan that ends outside (device prefix, prompt end) and tells the plan', async () => {
    const sut = new SimEngine({ cost: zeroCost, kvBytes: layout });
    const { plan, calls } = planFrom([], 600);
    await expect(sut.prefill([input('b', { restore: () => plan })])).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
    expect(calls.done).toEqual([[false, 0]]);
    expect(sut.activeSequences).toBe(0);
  });

  it('charges prefill time only for the tokens it computes', async () => {
    const chunks = await exportedChunks();
    let t = 0;
    const steps: SimStep[] = [];
    const cost = { ...zeroCost, prefillPerTokenMs: 1 };
    const sut = new SimEngine({ cost, kvBytes: layout, now: () => t, sleep: async (ms) => void (t += ms), onStep: (s) => steps.push(s) });
    await sut.prefill([input('b', { restore: () => planFrom(chunks, 512).plan })]);
    expect(t).toBe(600 - 512);
    await sut.prefill([{ ...input('c'), cacheSalt: 'other' }]);
    expect(steps.map((s) => s.costMs)).toEqual([88, 600]);
  });

  describe('overlap of loads with the modelled compute', () => {
    // 4 layers of 40 ms modelled compute each (160 tokens computed at 1 ms per token), on a virtual clock.
    const cost = { ...zeroCost, prefillPerTokenMs: 1 };
    const tokens = [...prompt.slice(0, 512), ...Array.from({ length: 160 }, (_, i) => 40 + (i % 50))];

    /** A discrete-event clock: sleeps wake in time order, each once everything runnable before it has run. */
    function virtualClock() {
      let t = 0;
      const timers: Array<{ at: number; wake: () => void }> = [];
      const sleep = (ms: number) => new Promise<void>((wake) => timers.push({ at: t + ms, wake }));
      const settle = () => new Promise<void>((r) => setImmediate(r));
      async function run<T>(p: Promise<T>): Promise<T> {
        let done = false;
        void p.finally(() => (done = true)).catch(() => undefined);
        for (;;) {
          await settle();
          if (done) return p;
          timers.sort((a, b) => a.at - b.at);
          const next = timers.shift();
          if (!next) throw new Error('virtual clock: nothing left to wake');
          t = next.at;
          next.wake();
        }
      }
      return { now: () => t, sleep, run };
    }

    async function passWith(loadMs: number, restorePerChunkMs = 0): Promise<{ blocked: number; total: number }> {
      const chunks = await exportedChunks();
      const clock = virtualClock();
      const sut = new SimEngine({ cost: { ...cost, restorePerChunkMs }, kvBytes: layout, now: clock.now, sleep: clock.sleep });
      const { plan, calls } = planFrom(chunks, 512);
      const load = plan.load.bind(plan);
      const slow: KvRestorePlan = { ...plan, load: async (l) => (await clock.sleep(loadMs), load(l)) };
      await clock.run(sut.prefill([{ ...input('b'), tokens, restore: () => slow }]));
      return { blocked: calls.done[0]![1]!, total: clock.now() };
    }

    it('blocks only on the first layer when loads are shorter than a layer of compute', async () => {
      expect(await passWith(5)).toEqual({ blocked: 5, total: 5 + 160 });
    });

    it('blocks for what loads outlast the compute they overlap', async () => {
      // 4 loads of 90 ms, the last 3 each overlapping 40 ms of compute: 90 + 3 × 50 blocked, then layer 3's compute.
      expect(await passWith(90)).toEqual({ blocked: 90 + 3 * 50, total: 4 * 90 + 40 });
    });

    it('never blocks past the first layer when loads take exactly a layer of compute', async () => {
      expect(await passWith(40)).toEqual({ blocked: 40, total: 40 + 160 });
    });

    // 512 restored tokens are 2 chunks: the priced link carries each layer in 2 × price / 4 layers.
    it.each<[string, number, number, { blocked: number; total: number }]>([
      ['a link faster than compute blocks only the first layer (10 ms per layer)', 0, 20, { blocked: 10, total: 10 + 160 }],
      ['a link slower than compute blocks like slow loads (90 ms per layer)', 0, 180, { blocked: 90 + 3 * 50, total: 4 * 90 + 40 }],
      ['the later of the real load and the link sets each arrival', 90, 20, { blocked: 90 + 3 * 50, total: 4 * 90 + 40 }],
      ['instant real loads and a free link: only the first load’s wake-up', 0, 0, { blocked: 0, total: 160 }],
    ])('priced PCIe link: %s', async (_n, loadMs, price, want) => {
      expect(await passWith(loadMs, price)).toEqual(want);
    });
  });

  it.each<[string, number | undefined, number]>([
    ['unbounded (default): every full block of the finished request stays cached', undefined, 592],
    ['0 (InferCept swap-out): nothing stays once the request is released', 0, 0],
    ['16 blocks: 16 stay, the head of the prompt (a sequence releases its tail first)', 16, 256],
  ])('prefixCacheBlocks %s', async (_n, prefixCacheBlocks, cached) => {
    const sut = new SimEngine({ cost: zeroCost, ...(prefixCacheBlocks !== undefined ? { prefixCacheBlocks } : {}) });
    await sut.prefill([input('a')]);
    expect(sut.cachedTokens(input('b'))).toBe(592); // shared with the running request either way
    sut.release('a');
    expect(sut.cachedTokens(input('b'))).toBe(cached);
  });
});
