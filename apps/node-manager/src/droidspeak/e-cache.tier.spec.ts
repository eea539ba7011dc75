// E caches in the KV tiers: written through to host and SSD, read back bit for bit, found again
// after a restart (journal), fetched from a peer over the real ChunkTransfer gRPC, and a corrupt
// or missing chunk is data_loss and then "not available" (the plan widens), never wrong data.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkKeys, eCacheKeys, eCacheModelId, ErrorCode } from '@mnemo/kv-core';
import { ReferenceEngine } from '@mnemo/engine';
import { transfer } from '@mnemo/native-cuda';
import type { KvStore } from '../kv-store/kv.store.js';
import { ChunkPeerClient } from '../peers/chunk-peer.client.js';
import { eCacheModel, ECacheTier } from './e-cache.tier.js';
import { bits } from '../../test/conversation.fixture.js';
import { servePeerStore } from '../../test/peer-node.fixture.js';

const BASE = 'mnemo-tiny';
const LAYER = 2;
const PROMPT = 600;
const tokens = Array.from({ length: PROMPT }, (_, i) => (i * 13 + 5) % 250);
const baseKeys = chunkKeys(BASE, 't', tokens);

interface Node {
  readonly store: KvStore;
  readonly sut: ECacheTier;
  readonly address: string;
  close(): Promise<void>;
}

describe(ECacheTier.name, () => {
  let engine: ReferenceEngine;
  let d: number;
  let e: Float32Array;
  const dirs: string[] = [];
  const peers = new ChunkPeerClient(10_000);

  async function open(dir: string): Promise<Node> {
    const model = eCacheModel(BASE, d)!;
    const { store, address, close } = await servePeerStore(engine, dir, { extra: [model] });
    return { store, sut: new ECacheTier(store, peers, (b) => (b === BASE ? d : undefined)), address, close };
  }
  const freshDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mnemo-ecache-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    engine = await ReferenceEngine.create({ models: [BASE], backend: 'cpu', kvBlocks: 64 });
    d = engine.hiddenSize(BASE);
    // The base's real hidden state entering LAYER for the prompt.
    engine.openSequence('b', BASE, { temperature: 0, topP: 1, seed: 0 });
    const [r] = await engine.step([{ seqId: 'b', tokens }], { captureLayers: [LAYER] });
    e = r!.eCache.get(LAYER)!;
    engine.release('b');
  });
  afterAll(async () => {
    peers.close();
    await engine.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('keeps the whole chunks in host and SSD and gives back [0, until) bit for bit; a restart finds them', async () => {
    const dir = await freshDir();
    const a = await open(dir);
    expect(a.sut.available(BASE, baseKeys, LAYER, 300)).toBe(false);
    a.sut.put(BASE, baseKeys, LAYER, e, PROMPT);
    await a.store.settle();
    const m = a.store.tiers.model(eCacheModelId(BASE));
    for (const k of eCacheKeys(baseKeys, LAYER)) expect([m.table.holdsChunk(k, 'mem'), m.table.holdsChunk(k, 'ssd')]).toEqual([true, true]);
    // Only whole chunks: 600 tokens are 2 chunks, positions 512.. are not kept.
    expect(a.sut.available(BASE, baseKeys, LAYER, 512)).toBe(true);
    expect(a.sut.available(BASE, baseKeys, LAYER + 1, 300)).toBe(false);
    const src = a.sut.source(BASE, baseKeys, LAYER, 300)!;
    expect(src.from).toBe('local');
    expect(bits(await src.load())).toEqual(bits(e.subarray(0, 300 * d)));
    await a.close();

    const again = await open(dir);
    expect(again.store.replays.find((r) => r.model === eCacheModelId(BASE))?.applied).toBe(2);
    expect(bits(await again.sut.source(BASE, baseKeys, LAYER, 512)!.load())).toEqual(bits(e.subarray(0, 512 * d)));
    await again.close();
  });

  it('fetches from a peer that lists the E keys, keeps the copy, and gives back the same bits', async () => {
    const y = await open(await freshDir());
    const x = await open(await freshDir());
    try {
      y.sut.put(BASE, baseKeys, LAYER, e, PROMPT);
      await y.store.settle();
      const keys = eCacheKeys(baseKeys, LAYER, 2);
      expect(x.sut.available(BASE, baseKeys, LAYER, 512, [{ nodeId: 'y', address: y.address, chunkKeys: baseKeys }])).toBe(false);
      const peer = [{ nodeId: 'y', address: y.address, chunkKeys: [...baseKeys, ...keys] }];
      const src = x.sut.source(BASE, baseKeys, LAYER, 400, peer)!;
      expect(src.from).toBe('peer');
      expect(bits(await src.load())).toEqual(bits(e.subarray(0, 400 * d)));
      await x.store.settle();
      expect(x.sut.source(BASE, baseKeys, LAYER, 512)?.from).toBe('local');
    } finally {
      await x.close();
      await y.close();
    }
  });

  it('a peer without the chunks fails the load with data_loss and is then left out', async () => {
    const y = await open(await freshDir());
    const x = await open(await freshDir());
    try {
      const peer = [{ nodeId: 'y', address: y.address, chunkKeys: eCacheKeys(baseKeys, LAYER) }];
      await expect(x.sut.source(BASE, baseKeys, LAYER, 300, peer)!.load()).rejects.toMatchObject({ code: ErrorCode.DataLoss });
      expect(x.sut.available(BASE, baseKeys, LAYER, 300, peer)).toBe(false);
    } finally {
      await x.close();
      await y.close();
    }
  });

  it('a corrupt chunk fails the load with data_loss, is dropped, and the E cache is then not available', async () => {
    const a = await open(await freshDir());
    try {
      a.sut.put(BASE, baseKeys, LAYER, e, PROMPT);
      await a.store.settle();
      const m = a.store.tiers.model(eCacheModelId(BASE));
      const key = eCacheKeys(baseKeys, LAYER)[1]!;
      // Garbage over both replicas, through the pools themselves.
      for (const tier of ['mem', 'ssd'] as const) {
        const loc = m.table.get(key, 0, tier)!;
        await transfer(
          [new Uint8Array(4096).fill(0x5a), a.store.tiers.device(loc.deviceIndex).device],
          Float64Array.of(0, 0, 1, loc.offset, 4096),
        );
      }
      for (let i = 0; i < 2; i++) {
        const src = a.sut.source(BASE, baseKeys, LAYER, 512);
        if (!src) break;
        await expect(src.load()).rejects.toMatchObject({ code: ErrorCode.DataLoss });
      }
      expect(a.sut.available(BASE, baseKeys, LAYER, 512)).toBe(false);
      // The first chunk is intact: a shorter prefix still loads, bit for bit.
      expect(bits(await a.sut.source(BASE, baseKeys, LAYER, 256)!.load())).toEqual(bits(e.subarray(0, 256 * d)));
    } finally {
      await a.close();
    }
  });
});
