// One contract every offload tier passes (host-memory pool, SSD pool): put / get / contains /
// remove / evict, concurrent use, a full tier under pressure (no deadlock), reopen after a
// restart (the SSD pool), and corruption caught by CRC32C. Real pool devices, real files, real
// native I/O — sizes kept small.
import { join } from 'node:path';
import { ErrorCode, leadingLayers, type PoolTier } from '@mnemo/kv-core';
import { transfer } from '@mnemo/native-cuda';
import type { OffloadTiers, TierChange } from './offload.tiers.js';
import { RestoreReader } from './restore.reader.js';
import type { KvStoreSettings } from '../config/kv-store.settings.js';
import type { ChunkPayload, TierWriter } from './tier.writer.js';
import { chunkChain, expectLoads, layerOf } from '../../test/chunk-chain.fixture.js';
import { openTiers, scratchDirEach, strictWriter } from '../../test/kv-store.fixture.js';

const MODEL = 'm';
const G = { layers: 4, rowElems: 8 }; // 16 KiB segments, 64 KiB chunks
const MiB = 1024 * 1024;

interface Harness {
  tiers: OffloadTiers;
  writer: TierWriter;
  changes: TierChange[];
  close(): Promise<void>;
}

describe.each<[PoolTier, (dir: string, bytes: number) => KvStoreSettings]>([
  ['mem', (dir, bytes) => settings(dir, { hostBytes: bytes, ssdPools: [] })],
  ['ssd', (dir, bytes) => settings(dir, { hostBytes: 0, ssdPools: [{ path: join(dir, 'ssd-0.pool'), bytes }] })],
])('offload tier contract: %s', (tier, config) => {
  const scratch = scratchDirEach(`mnemo-tier-${tier}-`);
  const open = async (bytes = 8 * MiB): Promise<Harness> => {
    const changes: TierChange[] = [];
    const { tiers, close } = await openTiers(config(scratch(), bytes), MODEL, G, (c) => changes.push(c));
    const writer = strictWriter(tiers);
    return {
      tiers,
      writer,
      changes,
      close: async () => {
        await writer.drain();
        await close();
      },
    };
  };
  /** Reads positions [from, until) of a chain back, layer by layer. */
  const read = async (h: Harness, chunks: ChunkPayload[], from: number, until: number): Promise<Float32Array[]> => {
    const m = h.tiers.model(MODEL);
    const prefix = m.table.longestPrefix(chunks.map((c) => c.key));
    const reader = new RestoreReader(h.tiers, m, prefix.slice(Math.floor(from / 256), Math.ceil(until / 256)), from, until);
    try {
      const out: Float32Array[] = [];
      // A layer's array is only valid until the load two layers on (the reader reuses it).
      for (let l = 0; l < G.layers; l++) out.push((await reader.load(l)).slice());
      return out;
    } finally {
      reader.release();
    }
  };
  const holds = (h: Harness, key: string) => h.tiers.model(MODEL).table.holdsChunk(key, tier);

  it('put, contains, get bit-exact (whole and cut chunks), remove', async () => {
    const h = await open();
    const chunks = chain(3);
    await h.writer.write(MODEL, chunks);
    await h.writer.drain();
    expect(chunks.every((c) => holds(h, c.key))).toBe(true);
    expect(h.changes).toContainEqual({ kind: 'stored', tier, model: MODEL, keys: chunks.map((c) => c.key) });
    for (const [from, until] of [
      [0, 768],
      [96, 700],
    ] as const) {
      const layers = await read(h, chunks, from, until);
      layers.forEach((got, l) => expect(got).toEqual(expected(chunks, l, from, until)));
    }
    const m = h.tiers.model(MODEL);
    const used = h.tiers.usage(tier).used;
    h.tiers.applyRemovals(m, m.table.removeChunk(chunks[1]!.key));
    expect(holds(h, chunks[1]!.key)).toBe(false);
    expect(h.tiers.usage(tier).used).toBe(used - G.layers * m.stride);
    expect(h.changes.at(-1)).toEqual({ kind: 'removed', tier, model: MODEL, keys: [chunks[1]!.key] });
    await h.close();
  });

  it('a full tier evicts the least recently used request, later layers first, and never stalls', async () => {
    // Room for 6 chunks; 12 are written in 4 requests of 3.
    const h = await open(6 * 4 * 16 * 1024);
    const requests = [0, 1, 2, 3].map((salt) => chain(3, salt));
    for (const r of requests) await h.writer.write(MODEL, r);
    await h.writer.drain();
    const m = h.tiers.model(MODEL);
    expect(requests[3]!.every((c) => holds(h, c.key))).toBe(true);
    expect(requests[0]!.some((c) => holds(h, c.key))).toBe(false);
    // What an evicted request still has is its lower layers, never an upper layer without the ones below.
    for (const r of requests)
      for (const c of r) expect(m.table.layersIn(c.key, tier)).toEqual([...Array(leadingLayers(m.table, c.key, tier)).keys()]);
    expect(h.changes.some((c) => c.kind === 'removed' || c.kind === 'truncated')).toBe(true);
    expect(h.tiers.usage(tier).used).toBeLessThanOrEqual(h.tiers.usage(tier).capacity);
    await h.close();
  });

  it('serves concurrent writers and readers consistently', async () => {
    const h = await open(16 * MiB);
    const sets = [0, 1, 2, 3, 4, 5].map((salt) => chain(2, salt));
    await Promise.all(sets.map((s) => h.writer.write(MODEL, s)));
    await h.writer.drain();
    const reads = await Promise.all(sets.map((s) => read(h, s, 0, 512)));
    reads.forEach((layers, i) => layers.forEach((got, l) => expect(got).toEqual(expected(sets[i]!, l, 0, 512))));
    h.tiers.model(MODEL).table.checkInvariant();
    await h.close();
  });

  it('detects a corrupted copy by CRC32C, drops it and reports DataLoss', async () => {
    const h = await open();
    const chunks = chain(2);
    await h.writer.write(MODEL, chunks);
    await h.writer.drain();
    const m = h.tiers.model(MODEL);
    const loc = m.table.get(chunks[1]!.key, 2, tier)!;
    // Overwrite a few bytes of the stored segment through the pool itself (sector-sized on SSD).
    const garbage = new Uint8Array(4096).fill(0x5a);
    await transfer([garbage, h.tiers.device(loc.deviceIndex).device], Float64Array.of(0, 0, 1, loc.offset, 4096));
    await expect(read(h, chunks, 0, 511)).rejects.toMatchObject({ code: ErrorCode.DataLoss });
    expect(m.table.get(chunks[1]!.key, 2, tier)).toBeUndefined();
    expect(m.table.longestPrefix(chunks.map((c) => c.key))).toHaveLength(1);
    // Layers before the damaged one read fine.
    expect((await read(h, chunks, 0, 255))[0]).toEqual(expected(chunks, 0, 0, 255));
    await h.close();
  });

  it('a replica a restore holds is never evicted from under it: its bytes stay until the restore ends', async () => {
    // Room for exactly two chunks.
    const h = await open(2 * G.layers * 16 * 1024);
    const held = chain(2, 1);
    await h.writer.write(MODEL, held);
    await h.writer.drain();
    const m = h.tiers.model(MODEL);
    const reader = new RestoreReader(h.tiers, m, m.table.longestPrefix(held.map((c) => c.key)), 0, 512);
    try {
      expect((await reader.load(0)).slice()).toEqual(expected(held, 0, 0, 512));
      // Eviction passes over held replicas ...
      expect(h.tiers.evict(m, tier, h.tiers.usage(tier).capacity)).toBe(0);
      expect(held.every((c) => holds(h, c.key))).toBe(true);
      // ... and a removal takes them out of the table at once but leaves their space in use ...
      for (const c of held) h.tiers.applyRemovals(m, m.table.removeChunk(c.key));
      expect(held.some((c) => holds(h, c.key))).toBe(false);
      expect(h.tiers.usage(tier).used).toBe(h.tiers.usage(tier).capacity);
      // ... so a write that needs it is refused rather than overwriting the held bytes.
      const other = chain(2, 2);
      await h.writer.write(MODEL, other);
      await h.writer.drain();
      expect(other.some((c) => holds(h, c.key))).toBe(false);
      for (let l = 1; l < G.layers; l++) expect((await reader.load(l)).slice()).toEqual(expected(held, l, 0, 512));
    } finally {
      reader.release();
    }
    expect(h.tiers.usage(tier).used).toBe(0);
    const other = chain(2, 2);
    await h.writer.write(MODEL, other);
    await h.writer.drain();
    expect(other.every((c) => holds(h, c.key))).toBe(true);
    await h.close();
  });

  it('loads layers in any order and twice, bit-exact, though each load copies the next layer ahead', async () => {
    const h = await open();
    const chunks = chain(3, 3);
    await h.writer.write(MODEL, chunks);
    await h.writer.drain();
    const m = h.tiers.model(MODEL);
    // Copy-ahead off (the A/B setting) must read the same bytes.
    for (const options of [{}, { copyAhead: false }, { readAheadBytes: 1 }]) {
      const reader = new RestoreReader(h.tiers, m, m.table.longestPrefix(chunks.map((c) => c.key)), 100, 700, options);
      await expectLoads(reader, [0, 2, 1, 1, 3, 0, 3, 2], (l) => expected(chunks, l, 100, 700));
    }
    await h.close();
  });

  if (tier === 'ssd') {
    it('reopened after a restart, finds its chunks again through the journal', async () => {
      const chunks = chain(3);
      const first = await open();
      await first.writer.write(MODEL, chunks);
      await first.close();
      const again = await open();
      expect(again.tiers.counters.journalReplayedSegments).toBe(3 * G.layers);
      expect(chunks.every((c) => holds(again, c.key))).toBe(true);
      expect(again.changes).toContainEqual({ kind: 'stored', tier: 'ssd', model: MODEL, keys: chunks.map((c) => c.key) });
      const layers = await read(again, chunks, 0, 767);
      layers.forEach((got, l) => expect(got).toEqual(expected(chunks, l, 0, 767)));
      // New writes land beside the old ones, never over them.
      const more = chain(2, 9);
      await again.writer.write(MODEL, more);
      await again.writer.drain();
      expect((await read(again, chunks, 0, 767))[3]).toEqual(expected(chunks, 3, 0, 767));
      await again.close();
    });
  }
});

function settings(dir: string, over: Partial<KvStoreSettings>): KvStoreSettings {
  return {
    enabled: true,
    dataDir: dir,
    hostBytes: 0,
    hostDevices: 1,
    ssdPools: [],
    bandwidths: undefined,
    ssdTtlMs: 3_600_000,
    ioBackend: 'auto',
    eventsMs: 50,
    ...over,
    ...(over.bandwidths ? {} : { bandwidths: [...(over.hostBytes ? [10] : []), ...(over.ssdPools ?? []).map(() => 2)] }),
  };
}

function chain(n: number, salt = 0): ChunkPayload[] {
  return chunkChain(MODEL, G, n, salt);
}

function expected(chunks: ChunkPayload[], layer: number, from: number, until: number): Float32Array {
  return layerOf(G, chunks, layer, from, until);
}
