import { DeviceBlockManager, ElasticCacheCoordinator, ErrorCode } from '@mnemo/kv-core';
import type { KernelBackend, KvGeometry } from '@mnemo/native-cuda';
import { bits } from '../../../test/bits.js';
import { cpuBackend } from '../../../test/test-backend.js';
import { elasticSpec } from '../../model/device-budget.js';
import { syntheticWeightsFor } from '../../weights/synthetic-weights.generator.js';
import { DeviceModel } from '../device-model.js';
import { emptyStats } from '../layer-hooks.js';
import { ModelRuntime } from '../model.runtime.js';
import { argmax } from '../token.sampler.js';
import { HostBacking, DeviceRegionBacking, type LayerKvBacking } from './layer-kv.backing.js';
import { LayerStreamCache } from './layer-stream.cache.js';

// Master: mnemo-small (6 layers, 2×32 KV) — worker: mnemo-tiny (4 layers, 2×16 KV). One unit = 1 master block = 3 worker blocks.
const MASTER = syntheticWeightsFor('mnemo-small');
const WORKER = syntheticWeightsFor('mnemo-tiny');
const toks = (n: number, salt = 0): number[] => Array.from({ length: n }, (_, i) => (i * 37 + salt * 11 + 5) % 256);
const masterGeom: KvGeometry = { numLayers: 6, numKvHeads: 2, headDim: 32, blockSize: 16 };

/** The steps a conversation takes: prompt chunks (chunked prefill), then greedy decode. */
async function converse(
  step: (tokens: number[]) => Promise<Float32Array>,
  prompt: number[],
  chunk: number,
  decode: number,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let at = 0; at < prompt.length; at += chunk) out.push(await step(prompt.slice(at, at + chunk)));
  for (let i = 0; i < decode; i++) out.push(await step([argmax(out[out.length - 1]!)]));
  return out;
}

/** The same conversation with every layer's KV resident (enough local memory). */
async function residentRun(backend: KernelBackend<Float32Array>, prompt: number[], chunk: number, decode: number): Promise<Float32Array[]> {
  const rt = new ModelRuntime(backend, MASTER, 64, emptyStats());
  rt.cache.open('ref');
  try {
    return await converse(async (t) => (await rt.step([{ seqId: 'ref', tokens: t }]))[0]!.logits, prompt, chunk, decode);
  } finally {
    rt.free();
  }
}

/** A worker serving its own sequence on 8 units, lending what it does not need to the master. */
async function lendingWorker(backend: KernelBackend<Float32Array>) {
  const worker = new ModelRuntime(backend, WORKER, 24, emptyStats());
  const master = elasticSpec(MASTER.config);
  const sut = new ElasticCacheCoordinator(
    [
      { ...master, blocks: new ModelRuntime(backend, MASTER, 1, emptyStats()).cache.ledger.blocks },
      { ...elasticSpec(WORKER.config), blocks: worker.cache.ledger.blocks },
    ],
    60_000,
  );
  worker.cache.open('own');
  const ownPrompt = toks(40, 3);
  const before = (await worker.step([{ seqId: 'own', tokens: ownPrompt }]))[0]!.logits;
  sut.observe('mnemo-tiny', 0, 48);
  sut.observe('mnemo-small', 0, 100_000);
  sut.tick(1);
  const lent = new DeviceRegionBacking(backend, worker.cache.tensor, masterGeom, sut.borrowedBlocks('mnemo-tiny'), (b) =>
    sut.lentBlockOffset('mnemo-tiny', b),
  );
  return { worker, coordinator: sut, lent, ownPrompt, before };
}

describe(LayerStreamCache.name, () => {
  const prompt = toks(150);

  it.each([
    // name, window, chunk, lender?, host blocks, prompt, expected placement, local regular blocks
    ['lent blocks only, window 2', 2, 64, true, 0, 96, { lent: 7, local: 0, host: 0 }],
    ['regular cache, then lent blocks, then the host pool', 2, 50, true, 4, 150, { lent: 7, local: 2, host: 1 }, 2],
    ['lent blocks then the host pool, window 2', 2, 64, true, 8, 150, { lent: 7, local: 0, host: 3 }],
    ['host pool only, window 3, short chunks', 3, 23, false, 16, 150, { lent: 0, local: 0, host: 10 }],
  ] as Array<[string, number, number, boolean, number, number, object, number?]>)(
    '%s: logits bit-identical to a run with every layer resident',
    async (_n, window, chunk, withLender, hostBlocks, promptLen, placement, regular = 0) => {
      const backend = cpuBackend();
      const p = prompt.slice(0, promptLen);
      const expected = await residentRun(backend, p, chunk, 6);
      const w = withLender ? await lendingWorker(backend) : null;
      const backings: Array<LayerKvBacking<Float32Array>> = [];
      if (regular > 0) {
        const BE = 2 * 6 * 16 * 2 * 32;
        backings.push(
          new DeviceRegionBacking(
            backend,
            backend.alloc(regular * BE),
            masterGeom,
            new DeviceBlockManager(regular),
            (b) => b * BE,
            'local',
          ),
        );
      }
      if (w) backings.push(w.lent);
      if (hostBlocks > 0) backings.push(new HostBacking(backend, masterGeom, hostBlocks));
      const sut = new LayerStreamCache(backend, new DeviceModel(backend, MASTER), { blocks: 12, window, backings });
      sut.open('long');
      const got = await converse((t) => sut.step('long', t), p, chunk, 6);
      expect(got.map(bits)).toEqual(expected.map(bits));
      expect(sut.placement('long')).toEqual(placement);
      expect(sut.stats.layerLoads).toBeGreaterThan(0);
      if (w) {
        // The lender's own sequence is untouched by the master's writes into its lent region.
        w.coordinator.checkInvariant();
        const after = (await w.worker.step([{ seqId: 'own', tokens: [7] }]))[0]!.logits;
        const fresh = new ModelRuntime(backend, WORKER, 24, emptyStats());
        fresh.cache.open('own');
        await fresh.step([{ seqId: 'own', tokens: w.ownPrompt }]);
        expect(bits(after)).toEqual(bits((await fresh.step([{ seqId: 'own', tokens: [7] }]))[0]!.logits));
      }
      sut.release('long');
      if (w) expect(w.coordinator.borrowedBlocks('mnemo-tiny').numActive).toBe(0);
    },
  );

  it(
    'the lender decodes its own sequence while the master streams ' + 'through its lent region: both bit-identical to running alone',
    async () => {
      const backend = cpuBackend();
      const p = prompt.slice(0, 96);
      const expected = await residentRun(backend, p, 32, 6);
      const w = await lendingWorker(backend);
      // The worker alone, from the same state, for the reference.
      const solo = new ModelRuntime(backend, WORKER, 24, emptyStats());
      solo.cache.open('own');
      let soloLast = (await solo.step([{ seqId: 'own', tokens: w.ownPrompt }]))[0]!.logits;
      const soloOut: Float32Array[] = [];
      // 40 + 8 tokens: exactly the 3 blocks the worker kept; a 9th token would need a lent block.
      for (let i = 0; i < 8; i++) soloOut.push((soloLast = (await solo.step([{ seqId: 'own', tokens: [argmax(soloLast)] }]))[0]!.logits));
      const sut = new LayerStreamCache(backend, new DeviceModel(backend, MASTER), { blocks: 8, window: 2, backings: [w.lent] });
      sut.open('long');
      const workerLoop = async () => {
        const out: Float32Array[] = [];
        let last = w.before;
        for (let i = 0; i < 8; i++) {
          out.push((last = (await w.worker.step([{ seqId: 'own', tokens: [argmax(last)] }]))[0]!.logits));
          await new Promise((r) => setImmediate(r));
        }
        return out;
      };
      const [master, worker] = await Promise.all([converse((t) => sut.step('long', t), p, 32, 6), workerLoop()]);
      expect(master.map(bits)).toEqual(expected.map(bits));
      expect(worker.map(bits)).toEqual(soloOut.map(bits));
      // Its next token needs a block it lent: the worker's own cache refuses, nothing is overwritten.
      await expect(w.worker.step([{ seqId: 'own', tokens: [1] }])).rejects.toMatchObject({ code: ErrorCode.Overloaded });
      w.coordinator.checkInvariant();
    },
  );

  it('refuses a context longer than the stream, changing nothing', async () => {
    const backend = cpuBackend();
    const sut = new LayerStreamCache(backend, new DeviceModel(backend, MASTER), {
      blocks: 2,
      window: 2,
      backings: [new HostBacking(backend, masterGeom, 8)],
    });
    sut.open('s');
    await sut.step('s', toks(20));
    await expect(sut.step('s', toks(13))).rejects.toMatchObject({ code: ErrorCode.Overloaded });
    expect(sut.length('s')).toBe(20);
  });

  it('refuses when every backing is full, releasing what it took', async () => {
    const backend = cpuBackend();
    const host = new HostBacking(backend, masterGeom, 1);
    const sut = new LayerStreamCache(backend, new DeviceModel(backend, MASTER), { blocks: 8, window: 2, backings: [host] });
    sut.open('s');
    await expect(sut.step('s', toks(40))).rejects.toMatchObject({ code: ErrorCode.Overloaded });
    expect(host.allocate()).not.toBeNull();
  });

  it.each([
    ['window of 1 cannot overlap', { blocks: 4, window: 1 }],
    ['window beyond the layers', { blocks: 4, window: 7 }],
    ['no blocks', { blocks: 0, window: 2 }],
  ])('rejects %s', (_n, o) => {
    const backend = cpuBackend();
    expect(() => new LayerStreamCache(backend, new DeviceModel(backend, MASTER), { ...o, backings: [] })).toThrow(RangeError);
  });
});
