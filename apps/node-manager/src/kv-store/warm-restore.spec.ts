// Warm restores: a request's SSD reads start as it arrives (KvStore.warm), and the restore plan
// of its pass takes them over when it restores the same positions. A plan for other positions,
// a cool() and closing the store let the reader go; nothing stays pinned or allocated.
// Real pool devices and files; the chunks are on SSD only.
import type { ReferenceEngine, KvRestorePlan } from '@mnemo/engine';
import { chunkChain, layerOf } from '../../test/chunk-chain.fixture.js';
import { openStoreRig, type StoreRig } from '../../test/kv-store.fixture.js';
import { KvStore, type StoredPrompt } from './kv.store.js';
import type { ChunkPayload } from './tier.writer.js';

const MODEL = 'mnemo-tiny';
const MiB = 1024 * 1024;

describe('KvStore warm restores', () => {
  let rig: StoreRig;
  let engine: ReferenceEngine;
  let store: KvStore;
  let chunks: ChunkPayload[];
  let prompt: StoredPrompt;

  beforeEach(async () => {
    rig = await openStoreRig('mnemo-warm-', { models: [MODEL], kvBlocks: 64 }, { hostBytes: 4 * MiB });
    ({ engine, store } = rig);
    chunks = chunkChain(MODEL, engine.kvLayout(MODEL)!, 3);
    await store.writeChunks(MODEL, chunks);
    await store.settle();
    const m = store.tiers.model(MODEL);
    store.tiers.evict(m, 'mem', 4 * MiB);
    expect(chunks.every((c) => m.table.holdsChunk(c.key, 'ssd') && !m.table.holdsChunk(c.key, 'mem'))).toBe(true);
    prompt = { model: MODEL, chunkKeys: chunks.map((c) => c.key), promptTokens: 3 * 256 + 10 };
  });
  afterEach(() => rig.close());

  /**
   * Host space in use is exactly what the host tier lists: nothing pinned or promoted was leaked.
   * A released reader frees its unfinished promotions once their reads land, so this waits a little.
   */
  async function noLeaks(): Promise<void> {
    const m = store.tiers.model(MODEL);
    const leaked = () => store.tiers.usage('mem').used - m.table.stats('mem').segments * m.stride;
    for (let i = 0; i < 100 && leaked() !== 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(leaked()).toBe(0);
  }

  async function loadAll(plan: KvRestorePlan, from: number): Promise<void> {
    const g = engine.kvLayout(MODEL)!;
    try {
      for (let l = 0; l < g.layers; l++) expect((await plan.load(l)).slice()).toEqual(layerOf(g, chunks, l, from, plan.until));
    } finally {
      plan.done?.(true);
    }
  }

  it("the pass's plan takes over the reads the arrival started; every layer bit-exact", async () => {
    store.warm('a', prompt, 0);
    const plan = store.restorePlan(prompt, 0, 'a')!;
    expect(store.warmCounters).toEqual({ started: 1, used: 1, stale: 0, expired: 0 });
    expect(plan.until).toBe(3 * 256);
    await loadAll(plan, 0);
    // The reads promoted every chunk into the host pool on the way.
    const m = store.tiers.model(MODEL);
    expect(chunks.every((c) => m.table.holdsChunk(c.key, 'mem'))).toBe(true);
  });

  it('a pass that restores other positions plans afresh and lets the warm reader go', async () => {
    store.warm('b', prompt, 0);
    const plan = store.restorePlan(prompt, 256, 'b')!;
    expect(store.warmCounters).toMatchObject({ used: 0, stale: 1 });
    await loadAll(plan, 256);
    await noLeaks();
  });

  it('cool() and a second warm of the same request: one reader at most, none left after cool', async () => {
    store.warm('c', prompt, 0);
    store.warm('c', prompt, 0);
    expect(store.warmCounters.started).toBe(1);
    store.cool('c');
    // Nothing warm is left for the pass to take.
    const plan = store.restorePlan(prompt, 0, 'c')!;
    expect(store.warmCounters).toMatchObject({ used: 0, stale: 0 });
    plan.done?.(true);
    await noLeaks();
  });

  it('nothing on SSD to read (the host pool holds it all): no warm reader', async () => {
    store.warm('d', prompt, 0);
    await loadAll(store.restorePlan(prompt, 0, 'd')!, 0);
    store.warm('e', prompt, 0);
    expect(store.warmCounters.started).toBe(1);
  });

  it('the store closes with a warm restore outstanding', async () => {
    store.warm('f', prompt, 0);
    expect(store.warmCounters.started).toBe(1);
  });
});
