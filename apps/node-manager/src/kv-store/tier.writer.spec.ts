// TierWriter hands a chunk's payload back (ChunkPayload.release) exactly once, and only when no
// tier reads it any more: after its host copy, or after the SSD writes made straight from it
// when host memory had no room. The node exports chunks into pooled buffers on the strength of
// that; a release too early would let the next export overwrite bytes still being written.
import { crc32c, packTransferRanges, transfer } from '@mnemo/native-cuda';
import type { OffloadTiers, TierChange } from './offload.tiers.js';
import { TierWriter, type ChunkPayload } from './tier.writer.js';
import { chunkChain } from '../../test/chunk-chain.fixture.js';
import { openTiers, scratchDirEach, strictWriter, type TiersRig } from '../../test/kv-store.fixture.js';
import { smallPoolSettings } from '../../test/pool-settings.fixture.js';

const MODEL = 'm';
const G = { layers: 6, rowElems: 8 }; // 16 KiB segments, 96 KiB chunks
const KiB = 1024;

const scratch = scratchDirEach('mnemo-writer-');

/** MODEL's tiers in the test's scratch folder: `hostBytes` of host memory and a 4 MiB SSD pool. */
const openIn = (hostBytes: number, onChange?: (c: TierChange) => void): Promise<TiersRig> =>
  openTiers(smallPoolSettings(scratch(), { hostBytes, ssdBytes: 4 * KiB * KiB }), MODEL, G, onChange);

describe(`${TierWriter.name} payload release`, () => {
  let tiers: OffloadTiers;
  let close: () => Promise<void>;

  async function open(hostBytes: number): Promise<void> {
    ({ tiers, close } = await openIn(hostBytes));
  }

  /** The chain, each payload's release recording which layers some tier held at that moment. */
  function tracked(n: number): { chunks: ChunkPayload[]; released: Map<string, boolean[][]> } {
    const released = new Map<string, boolean[][]>();
    const chunks = chunkChain(MODEL, G, n).map((c) => ({
      ...c,
      release: () => {
        const m = tiers.model(MODEL);
        const held = Array.from(
          { length: G.layers },
          (_, l) => m.table.get(c.key, l, 'mem') !== undefined || m.table.get(c.key, l, 'ssd') !== undefined,
        );
        released.set(c.key, [...(released.get(c.key) ?? []), held]);
      },
    }));
    return { chunks, released };
  }

  afterEach(() => close());

  it.each([
    ['host memory takes every chunk', 4 * KiB * KiB, 0],
    ['host memory takes a few segments, the rest go to SSD straight from the payload', 64 * KiB, 1],
  ])('releases each payload once, after every layer landed in some tier: %s', async (_name, hostBytes, minSkipped) => {
    await open(hostBytes);
    const writer = strictWriter(tiers);
    const { chunks, released } = tracked(3);
    await writer.write(MODEL, chunks);
    await writer.drain();
    const m = tiers.model(MODEL);
    const notInHost = chunks
      .flatMap((c) => Array.from({ length: G.layers }, (_, l) => m.table.get(c.key, l, 'mem') === undefined))
      .filter(Boolean).length;
    expect(notInHost).toBeGreaterThanOrEqual(minSkipped);
    for (const c of chunks) expect(released.get(c.key)).toEqual([Array(G.layers).fill(true)]);
  });

  it('releases at once what a stopped writer will not write, and what a tier already holds', async () => {
    await open(4 * KiB * KiB);
    const writer = strictWriter(tiers);
    const first = tracked(2);
    await writer.write(MODEL, first.chunks);
    const again = tracked(2);
    await writer.write(MODEL, again.chunks);
    await writer.drain();
    expect([...again.released.values()].map((r) => r.length)).toEqual([1, 1]);
    writer.stop();
    const late = tracked(1);
    await writer.write(MODEL, late.chunks);
    expect([...late.released.values()].map((r) => r.length)).toEqual([1]);
  });
});

describe(`${TierWriter.name} write-behind bound`, () => {
  let tiers: OffloadTiers;
  let close: () => Promise<void>;
  const SEG = 16 * KiB;

  afterEach(() => close());

  async function open(hostBytes: number): Promise<void> {
    ({ tiers, close } = await openIn(hostBytes));
  }

  it.each([
    // A burst of 4 chunks (24 segments) the disk cannot take at once: host pins queue up.
    ['pinned host segments', 4 * KiB * KiB, 3 * SEG, 3 * SEG],
    // The host pool has no room: whole payloads wait for their SSD writes.
    ['payloads the host pool had no room for', 0, 6 * SEG, 6 * SEG],
  ])('holds at most its bound in %s, drops the rest (counted) and never loses what it kept', async (_name, hostBytes, bound, most) => {
    await open(hostBytes);
    const errors: unknown[] = [];
    const sut = new TierWriter(tiers, (e) => errors.push(e), bound);
    const chunks = chunkChain(MODEL, G, 4);
    let released = 0;
    const writes = chunks.map((c) => sut.write(MODEL, [{ ...c, release: () => released++ }]));
    // Everything the burst queued is queued by now (host copies resolve before the SSD writes do).
    let peak = sut.pendingSsdBytes;
    await Promise.all(writes);
    peak = Math.max(peak, sut.pendingSsdBytes);
    await sut.drain();
    expect(errors).toEqual([]);
    expect(peak).toBeLessThanOrEqual(most);
    expect(sut.ssdDropped).toBeGreaterThan(0);
    expect(sut.pendingSsdBytes).toBe(0);
    expect(released).toBe(chunks.length);
    const m = tiers.model(MODEL);
    // Every segment is in some tier or was counted as dropped.
    const kept = chunks.flatMap((c) =>
      Array.from({ length: G.layers }, (_, l) => m.table.get(c.key, l, 'mem') !== undefined || m.table.get(c.key, l, 'ssd') !== undefined),
    );
    expect(kept.filter((k) => !k).length).toBeLessThanOrEqual(sut.ssdDropped);
    if (hostBytes > 0) expect(kept.every(Boolean)).toBe(true);
  });
});

describe(`${TierWriter.name} SSD write-behind`, () => {
  it('writes a burst through in parts, then to SSD in batches (two in flight) bit-exact under the host CRC32C, all journaled', async () => {
    const stored: string[] = [];
    const first = await openIn(4 * KiB * KiB, (c) => {
      if (c.kind === 'stored' && c.tier === 'mem') stored.push(...c.keys);
    });
    const { tiers } = first;
    const writer = strictWriter(tiers);
    const chunks = chunkChain(MODEL, G, 30); // 180 segments: host parts of 16, 64, 64 and 36, SSD batches of at most 64
    await writer.write(MODEL, chunks);
    await writer.drain();
    // Written through in parts, each chunk is reported stored in host memory once, when whole.
    expect([...stored].sort()).toEqual(chunks.map((c) => c.key).sort());
    const m = tiers.model(MODEL);
    const bytes = new Uint8Array(m.segBytes);
    for (const c of chunks) {
      for (let l = 0; l < G.layers; l++) {
        const mem = m.table.get(c.key, l, 'mem')!;
        const ssd = m.table.get(c.key, l, 'ssd')!;
        expect(ssd).toBeDefined();
        expect(ssd.crc32c).toBe(mem.crc32c);
        bytes.fill(0);
        const ssdDevice = tiers.device(ssd.deviceIndex).device;
        await transfer(
          [ssdDevice, bytes],
          packTransferRanges([{ src: 0, srcOffset: ssd.offset, dst: 1, dstOffset: 0, length: m.segBytes }]),
        );
        expect(Buffer.from(bytes).equals(Buffer.from(c.payload.buffer, c.payload.byteOffset + l * m.segBytes, m.segBytes))).toBe(true);
        expect(crc32c(bytes)).toBe(ssd.crc32c);
      }
    }
    await first.close();
    // Every batch was journaled: a restart finds all 180 segments.
    const again = await openIn(4 * KiB * KiB);
    expect(again.replay.applied).toBe(chunks.length * G.layers);
    await again.close();
  });

  it.each([
    ['default: one commit, once the last part is on SSD', {}, 1],
    ['commitBetweenParts (the earlier behaviour): a commit whenever the queue ran dry', { commitBetweenParts: true }, 2],
  ])('commits the write-behind of a write-through in parts: %s', async (_name, tuning, minCommits) => {
    const { tiers, close } = await openIn(4 * KiB * KiB);
    const m = tiers.model(MODEL);
    const chunks = chunkChain(MODEL, G, 30); // 180 segments: host parts of 16, 64, 64 and 36
    /** At each commit: how many segments SSD held. */
    const commits: number[] = [];
    const flush = tiers.flushJournals.bind(tiers);
    tiers.flushJournals = () => {
      commits.push(
        chunks.reduce((n, c) => n + Array.from({ length: G.layers }, (_, l) => m.table.get(c.key, l, 'ssd')).filter(Boolean).length, 0),
      );
      return flush();
    };
    const writer = strictWriter(tiers, tuning);
    await writer.write(MODEL, chunks);
    await writer.drain();
    expect(commits.length).toBeGreaterThanOrEqual(minCommits);
    // The last commit names every segment; by default it is the only one (the device never waits for a sync between parts).
    expect(commits.at(-1)).toBe(chunks.length * G.layers);
    if (!('commitBetweenParts' in tuning)) expect(commits).toEqual([chunks.length * G.layers]);
    await close();
  });
});
