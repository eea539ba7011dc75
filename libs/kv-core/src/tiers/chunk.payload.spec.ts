import { LookupTable } from '../pool/lookup.table.js';
import type { PoolTier } from '../pool/pool.types.js';
import { missingSegments, PayloadUse, SSD_BATCHES_PER_COMMIT, ssdCommitDue, ssdWritesToDo, type ChunkPayload } from './chunk.payload.js';

/** A table of two-layer chunks holding (chunk, layer, tier) triples. */
function table(held: ReadonlyArray<[string, number, PoolTier]>): LookupTable {
  const t = new LookupTable({ numLayers: 2 });
  for (const [key, layer, type] of held)
    t.put(
      { chunkKey: key.repeat(32), position: key.charCodeAt(0) - 97, layer },
      { deviceIndex: 0, type, offset: 0, length: 8, crc32c: 0 },
      0,
    );
  return t;
}

describe(PayloadUse.name, () => {
  it.each<[string, number, number, number]>([
    ['the host write alone: released when it drops', 0, 1, 1],
    ['with two SSD writes: not while one still reads', 2, 2, 0],
    ['with two SSD writes: released when the last drops', 2, 3, 1],
    ['dropped past zero: released once only', 0, 2, 1],
  ])('%s', (_name, adds, drops, released) => {
    let n = 0;
    const sut = new PayloadUse({ key: 'k', position: 0, payload: new Float32Array(1), release: () => n++ });
    for (let i = 0; i < adds; i++) sut.add();
    for (let i = 0; i < drops; i++) sut.drop();
    expect(n).toBe(released);
  });
});

describe(missingSegments.name, () => {
  const chunk = (key: string, floats = 4): ChunkPayload => ({
    key: key.repeat(32),
    position: key.charCodeAt(0) - 97,
    payload: new Float32Array(floats),
  });
  const shape = { layers: 2, segBytes: 8 };

  it.each<[string, Array<[string, number, PoolTier]>, string[]]>([
    ['an empty tier: every segment, layer by layer across the chunks', [], ['a0@0', 'b0@0', 'a1@8', 'b1@8']],
    ['held in the tier: skipped', [['a', 0, 'mem']], ['b0@0', 'a1@8', 'b1@8']],
    ['held only in another tier: still missing here', [['a', 0, 'ssd']], ['a0@0', 'b0@0', 'a1@8', 'b1@8']],
    [
      'all held: nothing',
      [
        ['a', 0, 'mem'],
        ['a', 1, 'mem'],
        ['b', 0, 'mem'],
        ['b', 1, 'mem'],
      ],
      [],
    ],
  ])('%s', (_name, held, want) => {
    const chunks = [chunk('a'), chunk('b')];
    const uses = chunks.map((c) => new PayloadUse(c));
    const got = missingSegments(table(held), 'mem', shape, chunks, uses);
    expect(got.map((s) => `${s.chunkKey[0]}${s.layer}@${s.byteOffset}`)).toEqual(want);
    for (const s of got) expect(s.use).toBe(uses[s.position]);
  });

  it('throws RangeError on a payload that is not a whole chunk', () => {
    const c = chunk('a', 3);
    expect(() => missingSegments(table([]), 'mem', shape, [c], [new PayloadUse(c)])).toThrow(RangeError);
  });
});

describe(ssdWritesToDo.name, () => {
  const job = (key: string, layer: number, kind: 'host' | 'payload') => ({
    seg: { chunkKey: key.repeat(32), position: key.charCodeAt(0) - 97, layer },
    source: { kind },
  });

  it.each<[string, Array<[string, number, PoolTier]>, Array<ReturnType<typeof job>>, string[]]>([
    [
      'payload jobs: all, layer by layer then by position',
      [],
      [job('b', 1, 'payload'), job('b', 0, 'payload'), job('a', 1, 'payload')],
      ['b0', 'a1', 'b1'],
    ],
    ['already on SSD: skipped', [['a', 0, 'ssd']], [job('a', 0, 'payload'), job('a', 1, 'payload')], ['a1']],
    ['a host copy still in the host tier: written', [['a', 0, 'mem']], [job('a', 0, 'host')], ['a0']],
    ['a host copy that left the host tier: skipped', [], [job('a', 0, 'host')], []],
  ])('%s', (_name, held, jobs, want) => {
    const got = ssdWritesToDo(table(held), jobs);
    expect(got.map((s) => `${s.chunkKey[0]}${s.layer}`)).toEqual(want);
    for (const s of got) expect(s.job.seg).toMatchObject({ chunkKey: s.chunkKey, layer: s.layer });
  });
});

describe(ssdCommitDue.name, () => {
  it.each<[string, boolean, number, boolean]>([
    ['the queue ran dry: commit', true, 1, true],
    ['mid-burst: not yet', false, SSD_BATCHES_PER_COMMIT - 1, false],
    ['a long burst: every few batches', false, SSD_BATCHES_PER_COMMIT, true],
  ])('%s', (_name, dry, sinceCommit, due) => {
    expect(ssdCommitDue(dry, sinceCommit)).toBe(due);
  });
});
