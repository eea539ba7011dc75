// KV store, done-when "fidelity": a conversation whose KV went to the host pool and the SSD pool
// and came back gives bit-identical KV (hence logits) and the same tokens as one whose KV never
// left the device, and as a fresh full prefill — reference engine, CPU backend, real pools.
import { jest } from '@jest/globals';
import { chunkBlockKeys, chunkKeys, type HoldingChange } from '@mnemo/kv-core';
import { ReferenceEngine } from '@mnemo/engine';
import { bits, converse, GREEDY, MODEL, toks } from '../../test/conversation.fixture.js';
import { openStore, scratchDirEach } from '../../test/kv-store.fixture.js';

describe('KV store fidelity across tiers', () => {
  const scratch = scratchDirEach('mnemo-fidelity-');

  it.each([
    ['turn 1 left its last chunk partial, and so does turn 2', 40, false],
    ['turn 1 left its last chunk partial, and turn 2 fills it', 200, false],
    ['as both, its SSD reads started as it arrived (warm)', 40, true],
  ])('turn 2 restored from host and SSD equals the device-only run and a fresh prefill, bit for bit: %s', async (_name, added, warm) => {
    const turn1 = toks(600, 1);
    // 56 device blocks (896 tokens): the filler below pushes turn 1 off the device; 768 KiB of host
    // memory holds 3 of mnemo-tiny's 256 KiB chunks, so part of turn 1 is left only on SSD.
    const engine = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 56 });
    const changes: HoldingChange[] = [];
    const store = await openStore(engine, scratch(), { hostBytes: 768 * 1024, onChange: (c) => changes.push(c) });
    try {
      const first = await converse(engine, 't1', turn1, 20, store);
      await store.settle();
      await converse(engine, 'filler', toks(760, 9), 2, store);
      await store.settle();
      const m = store.tiers.model(MODEL);
      const keys1 = chunkKeys(MODEL, 't', turn1);
      expect(keys1.every((k) => m.table.holdsChunk(k, 'ssd'))).toBe(true);
      expect(keys1.some((k) => !m.table.holdsChunk(k, 'mem'))).toBe(true);
      // The filler left only turn 1's first 8 blocks on the device (blocks are reclaimed tail first).
      const onDevice = engine.cachedTokens({ seqId: 'q', model: MODEL, tokens: turn1, sampling: GREEDY, cacheSalt: 't' });
      expect(onDevice).toBe(128);

      // Turn 1 left its KV of 619 tokens: two whole chunks and a partial one of 6 blocks (96 tokens).
      const turn1Partial = chunkBlockKeys(MODEL, 't', [...turn1, ...first.out].slice(0, 608), keys1, 2)[5]!;
      expect(m.table.holdsChunk(turn1Partial, 'ssd')).toBe(true);

      const turn2 = [...turn1, ...first.out, ...toks(added, 5)];
      // The whole chunks turn 2 restores are held by the SSD pool already: none is exported again.
      const exported: number[] = [];
      const exportChunk = engine.exportChunk.bind(engine);
      jest
        .spyOn(engine, 'exportChunk')
        .mockImplementation((seqId, chunk, tokens) => (exported.push(chunk), exportChunk(seqId, chunk, tokens)));
      const restored = await converse(engine, 't2', turn2, 12, store, warm);
      expect(store.warmCounters).toEqual({ started: warm ? 1 : 0, used: warm ? 1 : 0, stale: 0, expired: 0 });
      expect(exported.filter((c) => c < keys1.length)).toEqual([]);
      // Everything turn 1 computed comes back, its partial last chunk included: as much as the device-only run.
      expect(restored.cached).toBe(608);
      expect(restored.restored).toBe(608 - onDevice);
      expect(store.counters.hitTokens.ssd).toBeGreaterThan(0);
      expect(changes).toContainEqual(expect.objectContaining({ kind: 'stored', tier: 'ssd', model: MODEL }));
      // Turn 2's partial last chunk is kept, and turn 1's, which its KV covers, is dropped.
      await store.settle();
      const kv2 = [...turn2, ...restored.out.slice(0, -1)];
      const keys2 = chunkKeys(MODEL, 't', kv2);
      expect(m.table.holdsChunk(chunkBlockKeys(MODEL, 't', kv2, keys2, keys2.length).at(-1)!, 'ssd')).toBe(true);
      expect(m.table.positionOf(turn1Partial)).toBeUndefined();

      // Never left the device: a big cache and no store.
      const big = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 256 });
      await converse(big, 't1', turn1, 20);
      const deviceOnly = await converse(big, 't2', turn2, 12);
      expect(deviceOnly.cached).toBe(608);
      // Fresh: no cache at all.
      const fresh = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 256 });
      const full = await converse(fresh, 't2', turn2, 12);
      expect(full.cached).toBe(0);

      expect(restored.out).toEqual(full.out);
      expect(deviceOnly.out).toEqual(full.out);
      expect(bits(restored.kv)).toEqual(bits(full.kv));
      expect(bits(deviceOnly.kv)).toEqual(bits(full.kv));
      await big.close();
      await fresh.close();
    } finally {
      await store.close();
      await engine.close();
    }
  });
});
