// RestoreReader on an SSD pool behind a host pool, as a node runs it: every layer comes off the
// SSD, is promoted into host memory and copied into the layer payload. Ring reads check each
// segment's CRC32C on that copy, so a promotion may join the host tier only after it passed.
// Real pool devices, real files, real native I/O — sizes kept small.
import { ErrorCode } from '@mnemo/kv-core';
import type { KvRestoreTarget } from '@mnemo/engine';
import { transfer } from '@mnemo/native-cuda';
import type { OffloadTiers } from './offload.tiers.js';
import { RestoreReader, type RestoreOptions } from './restore.reader.js';
import type { ChunkPayload } from './tier.writer.js';
import { chunkChain, expectLoads, layerOf } from '../../test/chunk-chain.fixture.js';
import { openTiers, removeDir, scratchDir, strictWriter } from '../../test/kv-store.fixture.js';
import { smallPoolSettings } from '../../test/pool-settings.fixture.js';

const MODEL = 'm';
const G = { layers: 6, rowElems: 8 }; // 16 KiB segments
const MiB = 1024 * 1024;

describe(RestoreReader.name, () => {
  let dir: string;
  let tiers: OffloadTiers;
  let close: () => Promise<void>;
  const chunks = chain(3, 4);

  beforeEach(async () => {
    dir = await scratchDir('mnemo-restore-');
    ({ tiers, close } = await openTiers(smallPoolSettings(dir, { hostBytes: 4 * MiB, ssdBytes: 4 * MiB }), MODEL, G));
    const writer = strictWriter(tiers);
    await writer.write(MODEL, chunks);
    await writer.drain();
    // Only the SSD pool holds the chunks now.
    tiers.evict(tiers.model(MODEL), 'mem', 4 * MiB);
  });
  afterEach(async () => {
    await close();
    await removeDir(dir);
  });

  const reader = (from: number, until: number, options?: RestoreOptions) => {
    const m = tiers.model(MODEL);
    return new RestoreReader(
      tiers,
      m,
      m.table.longestPrefix(chunks.map((c) => c.key)).slice(Math.floor(from / 256), Math.ceil(until / 256)),
      from,
      until,
      options,
    );
  };
  const inHost = (layer: number) => chunks.filter((c) => tiers.model(MODEL).table.get(c.key, layer, 'mem')).length;

  it.each<[string, RestoreOptions, number[]]>([
    ['ring, in order', {}, [0, 1, 2, 3, 4, 5]],
    ['ring, out of order and twice', {}, [0, 2, 1, 1, 5, 0, 3, 4, 3]],
    ['ring, one layer in flight', { readAheadBytes: 1 }, [0, 1, 2, 3, 4, 5]],
    ['ring, no copy-ahead', { copyAhead: false }, [0, 1, 2, 3, 4, 5]],
    ['ring, three layers copied ahead', { copyAheadLayers: 3 }, [0, 1, 2, 4, 3, 5, 5]],
    ['windows', { ssdReads: 'windows' }, [0, 1, 2, 3, 4, 5]],
    ['windows, out of order', { ssdReads: 'windows', readAheadBytes: 1 }, [3, 0, 5, 1, 1, 2, 4]],
    ['private buffers', { reuseBuffers: false }, [0, 1, 2, 3, 4, 5]],
  ])('%s: every layer bit-exact, promoted into host memory once checked', async (_name, options, order) => {
    await expectLoads(reader(100, 700, options), order, (l) => expected(chunks, l, 100, 700));
    for (let l = 0; l < G.layers; l++) expect(inHost(l)).toBe(chunks.length);
  });

  it.each<[string, RestoreOptions]>([
    ['ring (checked on the copy)', {}],
    // One-layer windows: a window fails as a whole.
    ['windows (checked as read)', { ssdReads: 'windows', readAheadBytes: 1 }],
  ])('%s: a corrupt SSD segment fails its layer, leaves no host copy and no leaked space', async (_name, options) => {
    const m = tiers.model(MODEL);
    const loc = m.table.get(chunks[1]!.key, 2, 'ssd')!;
    const garbage = new Uint8Array(4096).fill(0x5a);
    await transfer([garbage, tiers.device(loc.deviceIndex).device], Float64Array.of(0, 0, 1, loc.offset, 4096));
    const sut = reader(0, 767, options);
    try {
      for (const l of [0, 1]) expect((await sut.load(l)).slice()).toEqual(expected(chunks, l, 0, 767));
      await expect(sut.load(2)).rejects.toMatchObject({ code: ErrorCode.DataLoss });
    } finally {
      sut.release();
    }
    await sut.whenIdle();
    expect(m.table.get(chunks[1]!.key, 2, 'ssd')).toBeUndefined();
    expect(m.table.get(chunks[1]!.key, 2, 'mem')).toBeUndefined();
    expect(inHost(0)).toBe(chunks.length);
    // Host space in use is exactly what the host tier lists: promotions never kept were freed.
    expect(tiers.usage('mem').used).toBe(m.table.stats('mem').segments * m.stride);
  });

  it.each<[string, RestoreOptions]>([
    ['ring, on the compute lanes', {}],
    ['ring, on the copy threads', { intoLane: 'copy' }],
    ['windows', { ssdReads: 'windows' }],
  ])('%s: loadInto writes each row where the target says, bytes equal to load', async (_name, options) => {
    const n = 700 - 100;
    const target = scatteredTarget(n);
    const sut = reader(100, 700, options);
    try {
      for (const l of [0, 1, 3, 2, 5, 4]) {
        await sut.loadInto(l, target);
        expect(readTarget(target, n)).toEqual(expected(chunks, l, 100, 700));
      }
    } finally {
      sut.release();
    }
    // Bytes the target did not name are untouched.
    const names = new Set<number>();
    for (let i = 0; i < n; i++)
      for (let e = 0; e < G.rowElems; e++) names.add(target.kOffsets[i]! / 4 + e).add(target.vOffsets[i]! / 4 + e);
    const all = new Float32Array(target.buffer);
    for (let i = 0; i < all.length; i++) if (!names.has(i)) expect(all[i]).toBe(-1);
  });

  it('loadInto refuses a target of the wrong shape, and a corrupt segment fails its layer', async () => {
    const m = tiers.model(MODEL);
    const loc = m.table.get(chunks[2]!.key, 1, 'ssd')!;
    await transfer([new Uint8Array(4096).fill(0x33), tiers.device(loc.deviceIndex).device], Float64Array.of(0, 0, 1, loc.offset, 4096));
    const sut = reader(0, 767);
    try {
      await expect(sut.loadInto(0, scatteredTarget(766))).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
      await expect(sut.loadInto(0, { ...scatteredTarget(767), rowBytes: 16 })).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
      const target = scatteredTarget(767);
      await sut.loadInto(0, target);
      expect(readTarget(target, 767)).toEqual(expected(chunks, 0, 0, 767));
      await expect(sut.loadInto(1, target)).rejects.toMatchObject({ code: ErrorCode.DataLoss });
    } finally {
      sut.release();
    }
    await sut.whenIdle();
    expect(m.table.get(chunks[2]!.key, 1, 'ssd')).toBeUndefined();
  });

  it('hands its buffers back to the pool when released, and the next restore reuses them', async () => {
    const first = reader(0, 767);
    for (let l = 0; l < G.layers; l++) await first.load(l);
    first.release();
    await first.whenIdle();
    const idle = tiers.buffers.stats();
    expect(idle.buffers).toBeGreaterThan(0);
    const second = reader(0, 767);
    try {
      await second.load(0);
      expect(tiers.buffers.stats().buffers).toBeLessThan(idle.buffers);
    } finally {
      second.release();
    }
  });
});

function chain(n: number, salt = 0): ChunkPayload[] {
  return chunkChain(MODEL, G, n, salt);
}

function expected(chunks: ChunkPayload[], layer: number, from: number, until: number): Float32Array {
  return layerOf(G, chunks, layer, from, until);
}

const BLOCK = 16;

/**
 * A target laid out as the CPU engine's paged cache is: blocks of 16 positions, each with a K
 * plane then a V plane, the blocks in a shuffled order with unused blocks between them; every
 * float starts at -1 so a stray write shows.
 */
function scatteredTarget(n: number): KvRestoreTarget {
  const blocks = Math.ceil(n / BLOCK);
  const slots = Array.from({ length: 2 * blocks + 1 }, (_, i) => i);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = (i * 7919 + 13) % (i + 1);
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const plane = BLOCK * G.rowElems;
  const buffer = new Float32Array(slots.length * 2 * plane).fill(-1).buffer;
  const kOffsets = new Float64Array(n);
  const vOffsets = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = slots[Math.floor(i / BLOCK)]! * 2 * plane + (i % BLOCK) * G.rowElems;
    kOffsets[i] = k * 4;
    vOffsets[i] = (k + plane) * 4;
  }
  return { buffer, kOffsets, vOffsets, rowBytes: G.rowElems * 4 };
}

/** The target's rows gathered back into the payload layout `[K|V][n][row]`. */
function readTarget(t: KvRestoreTarget, n: number): Float32Array {
  const all = new Float32Array(t.buffer);
  const out = new Float32Array(2 * n * G.rowElems);
  for (let i = 0; i < n; i++) {
    out.set(all.subarray(t.kOffsets[i]! / 4, t.kOffsets[i]! / 4 + G.rowElems), i * G.rowElems);
    out.set(all.subarray(t.vOffsets[i]! / 4, t.vOffsets[i]! / 4 + G.rowElems), (n + i) * G.rowElems);
  }
  return out;
}
