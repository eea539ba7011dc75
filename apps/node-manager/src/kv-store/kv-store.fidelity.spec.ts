// KV store, done-when "fidelity": a conversation whose KV went to the host pool and the SSD pool
// and came back gives bit-identical KV (hence logits) and the same tokens as one whose KV never
// left the device, and as a fresh full prefill — reference engine, CPU backend, real pools.
import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkBlockKeys, chunkKeys, type HoldingChange } from '@mnemo/kv-core';
import { ReferenceEngine, type PrefillInput } from '@mnemo/engine';
import { KvStore, type StoredPrompt } from './kv.store.js';

const MODEL = 'mnemo-tiny';
const GREEDY = { temperature: 0, topP: 1, seed: 0 };
const toks = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 31 + salt * 17 + 3) % 250);
const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

/** Prefills and decodes greedily; returns the tokens and the sequence's whole KV. */
async function converse(
  engine: ReferenceEngine,
  seqId: string,
  tokens: number[],
  n: number,
  store?: KvStore,
  warm = false,
): Promise<{ out: number[]; kv: Float32Array; cached: number; restored: number }> {
  const keys = chunkKeys(MODEL, 't', tokens);
  const prompt: StoredPrompt = {
    model: MODEL,
    chunkKeys: keys,
    promptTokens: tokens.length,
    blockKeys: (c) => chunkBlockKeys(MODEL, 't', tokens, keys, c),
  };
  const input: PrefillInput = {
    seqId,
    model: MODEL,
    tokens,
    sampling: GREEDY,
    cacheSalt: 't',
    restore: store ? (d) => store.restorePlan(prompt, d, seqId) : undefined,
  };
  // As a node does when the request arrives: its SSD reads start before its pass.
  if (store && warm) store.warm(seqId, prompt, engine.cachedTokens(input));
  const [first] = await engine.prefill([input]);
  const out = [first!.token];
  while (out.length < n) out.push((await engine.decode([seqId]))[0]!.token);
  const kv = engine.exportKv(seqId, { layerStart: 0, layerEnd: 4, tokenStart: 0, tokenEnd: tokens.length + n - 1 });
  engine.release(seqId);
  return { out, kv, cached: first!.cachedTokens ?? 0, restored: first!.restoredTokens ?? 0 };
}

describe('KV store fidelity across tiers', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mnemo-fidelity-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

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
    const store = (await KvStore.open(
      {
        enabled: true,
        dataDir: dir,
        hostBytes: 768 * 1024,
        hostDevices: 1,
        ssdPools: [{ path: join(dir, 'ssd-0.pool'), bytes: 16 * 1024 * 1024 }],
        bandwidths: [10e9, 2e9],
        ssdTtlMs: 3_600_000,
        ioBackend: 'auto',
        eventsMs: 50,
      },
      engine,
      (c) => changes.push(c),
      () => undefined,
    ))!;
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
