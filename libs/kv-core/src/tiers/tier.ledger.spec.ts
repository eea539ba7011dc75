import { ExtentAllocator } from '../pool/extent.allocator.js';
import type { JournalRecord } from '../pool/journal.codec.js';
import type { PoolTier } from '../pool/pool.types.js';
import {
  hostPoolLayout,
  journalNeedsCompaction,
  POOL_ALIGNMENT,
  TierLedger,
  type JournalSink,
  type LedgerDevice,
  type TierChange,
} from './tier.ledger.js';

/** A chunk key named by one hex letter: `k('a')` is `aaa…a`. */
const k = (name: string): string => name.repeat(32);
/** The names of changed keys. */
const named = (cs: readonly TierChange[]) => cs.map((c) => ({ ...c, keys: c.keys.map((key) => key[0]) }));

/** Two layers of 4 floats per row: a segment of 2 KiB, one aligned slot each. */
const GEOMETRY = { layers: 2, rowElems: 1 };

class Ledger extends TierLedger<LedgerDevice, JournalSink> {
  add(model: string) {
    return this.register(model, GEOMETRY);
  }
}

/** A ledger over one host device (index 256) and, with `ssd`, one SSD device (index 0), `slots` segments each. */
function ledger(o: { ssd?: boolean; slots?: number } = {}) {
  const changes: TierChange[] = [];
  const records: JournalRecord[] = [];
  const dev = (index: number, type: PoolTier): LedgerDevice => ({
    index,
    type,
    allocator: new ExtentAllocator((o.slots ?? 8) * POOL_ALIGNMENT, POOL_ALIGNMENT),
    bandwidth: 1,
  });
  const sut = new Ledger(
    [dev(256, 'mem'), ...(o.ssd ? [dev(0, 'ssd')] : [])],
    Infinity,
    (c) => changes.push(c),
    () => 1000,
  );
  return { sut, changes, records, journal: { append: (r: readonly JournalRecord[]) => void records.push(...r) } };
}

/** Writes every layer of `keys` (positions 0, 1, …) into `tier`, as a writer would after its copy. */
function write(sut: Ledger, model: string, tier: PoolTier, keys: string[]): void {
  const m = sut.model(model);
  const d = sut.device(tier === 'mem' ? 256 : 0);
  const segs = keys.flatMap((name, position) =>
    [0, 1].map((layer) => ({
      seg: { chunkKey: k(name), position, layer },
      location: { deviceIndex: d.index, type: tier, offset: d.allocator.allocate(m.stride)!, length: m.segBytes, crc32c: 7 },
    })),
  );
  sut.put(m, segs);
}

describe(TierLedger.name, () => {
  it.each<[string, PoolTier, number]>([
    ['a host put reports its whole chunks and journals nothing', 'mem', 0],
    ['an SSD put reports its whole chunks and journals one record per segment', 'ssd', 4],
  ])('%s', (_name, tier, journaled) => {
    const { sut, changes, records, journal } = ledger({ ssd: true });
    sut.add('m').journal = journal;
    write(sut, 'm', tier, ['a', 'b']);
    expect(named(changes)).toEqual([{ kind: 'stored', tier, model: 'm', keys: ['a', 'b'] }]);
    expect(records.length).toBe(journaled);
    expect(sut.usage(tier).used).toBe(4 * POOL_ALIGNMENT);
  });

  it('keeps the first copy of a segment and frees a later one (putFirst)', () => {
    const { sut } = ledger();
    const m = sut.add('m');
    write(sut, 'm', 'mem', ['a']);
    const copy = () => {
      const offset = sut.device(256).allocator.allocate(m.stride)!;
      return { deviceIndex: 256, type: 'mem' as const, offset, length: m.segBytes, crc32c: 1 };
    };
    const [late, fresh] = [copy(), copy()];
    const kept = sut.putFirst(
      m,
      [
        { seg: { chunkKey: k('a'), position: 0, layer: 0 }, location: late },
        { seg: { chunkKey: k('b'), position: 1, layer: 0 }, location: fresh },
      ],
      'mem',
    );
    expect(kept.map((x) => x.seg.chunkKey)).toEqual([k('b')]);
    expect(sut.usage('mem').used).toBe(3 * POOL_ALIGNMENT);
  });

  it.each<[string, { ssd: boolean; purge: number }, PoolTier, string[]]>([
    [
      'host eviction asks the prefetched copies first; enough there, nothing else goes',
      { ssd: true, purge: 2 * POOL_ALIGNMENT },
      'mem',
      [],
    ],
    ['host eviction with SSD behind: this model first, its oldest chunk', { ssd: true, purge: 0 }, 'mem', ['m:a']],
    ['this model has too little: the other model gives the rest', { ssd: true, purge: 0 }, 'ssd', ['m:a', 'n:c']],
  ])('%s', (_name, o, tier, gone) => {
    const { sut, changes } = ledger({ ssd: o.ssd });
    sut.add('m');
    sut.add('n');
    sut.purgeFirst = () => o.purge;
    write(sut, 'n', tier, ['c']);
    write(sut, 'm', tier, ['a']);
    changes.length = 0;
    const bytes = Math.max(1, gone.length) * 2 * sut.model('m').segBytes;
    expect(sut.evict(sut.model('m'), tier, bytes)).toBeGreaterThanOrEqual(bytes);
    expect(changes.filter((c) => c.kind === 'removed').flatMap((c) => c.keys.map((key) => `${c.model}:${key[0]}`))).toEqual(gone);
    expect(sut.counters.evictedSegments[tier]).toBe(2 * gone.length);
  });

  it('a corrupt replica leaves the table and the journal, is counted and told to onDrop', () => {
    const { sut, changes, records, journal } = ledger({ ssd: true });
    sut.add('m').journal = journal;
    write(sut, 'm', 'ssd', ['a']);
    const dropped: string[] = [];
    sut.onDrop = (key, tier, reason) => dropped.push(`${key[0]} ${tier} ${reason}`);
    sut.dropCorrupt(sut.model('m'), k('a'), 1, 'ssd');
    expect(dropped).toEqual(['a ssd corrupt']);
    expect(records.at(-1)).toEqual({ kind: 'remove', chunkKey: k('a'), layer: 1 });
    expect(named(changes).at(-1)).toEqual({ kind: 'truncated', tier: 'ssd', model: 'm', keys: ['a'], layers: 1 });
    expect([sut.counters.crcFailures, sut.usage('ssd').used]).toEqual([1, POOL_ALIGNMENT]);
  });

  it('a pinned replica removed is freed only when unpinned', () => {
    const { sut } = ledger();
    const m = sut.add('m');
    write(sut, 'm', 'mem', ['a']);
    const pin = m.table.pin(k('a'), 0, 'mem')!;
    sut.applyRemovals(m, m.table.removeChunk(k('a')));
    expect(sut.usage('mem').used).toBe(POOL_ALIGNMENT);
    sut.unpin(m, [pin]);
    expect(sut.usage('mem').used).toBe(0);
  });

  it.each<[number, number, boolean]>([
    [10_000, 0, false],
    [10_001, 0, true],
    [14_000, 1_000, false],
    [14_001, 1_000, true],
  ])('a journal of %i records naming %i live segments needs compaction: %s', (records, live, expected) => {
    expect(journalNeedsCompaction(records, live)).toBe(expected);
  });

  it.each<[string, number, number, number]>([
    ['room for all: placed, nothing evicted', 4, 2, 0],
    ['a full tier evicts once, then places', 2, 2, 2],
    ['more than the tier holds: the rest stays unplaced', 2, 3, 2],
  ])('place: %s', (_name, slots, segments, evicted) => {
    const { sut } = ledger({ slots });
    const m = sut.add('m');
    if (evicted > 0) write(sut, 'm', 'mem', ['a']);
    const segs = Array.from({ length: segments }, (_, i) => ({ chunkKey: k('b'), position: 1, layer: i % 2 }));
    const { writes, unplaced } = sut.place(m, segs, 'mem');
    expect(writes.flatMap((w) => w.segments).length + unplaced.length).toBe(segments);
    expect(unplaced.length).toBe(Math.max(0, segments - slots));
    expect(sut.counters.evictedSegments.mem).toBe(evicted);
  });

  it.each<[string, PoolTier[], boolean]>([
    ['every layer held: pinned in the tier each is read from', ['mem', 'ssd'], true],
    ['a layer gone since the lookup: DataLoss, and nothing stays pinned', [], false],
  ])('pinRestore: %s', (_name, tiers, whole) => {
    const { sut } = ledger({ ssd: true });
    const m = sut.add('m');
    write(sut, 'm', 'mem', ['a']);
    write(sut, 'm', 'ssd', ['a']);
    m.table.remove(k('a'), 1, 'mem');
    const chunks = m.table.longestPrefix([k('a')]);
    // Gone between the lookup and the pin.
    if (!whole) m.table.remove(k('a'), 1, 'ssd');
    if (!whole) {
      expect(() => sut.pinRestore(m, chunks)).toThrow(expect.objectContaining({ code: 'data_loss' }));
      expect(m.table.removeChunk(k('a')).every((r) => !r.deferred)).toBe(true);
      return;
    }
    const pins = sut.pinRestore(m, chunks);
    expect(pins.map((layers) => layers.map((p) => p.location.type))).toEqual([tiers]);
  });

  it('dropHost removes prefetched host layers of known models and counts the bytes of unpinned ones', () => {
    const { sut } = ledger();
    const m = sut.add('m');
    write(sut, 'm', 'mem', ['a']);
    m.table.pin(k('a'), 1, 'mem');
    const drops = [
      { model: 'm', key: k('a'), layer: 0 },
      { model: 'm', key: k('a'), layer: 1 },
      { model: 'unknown', key: k('a'), layer: 0 },
    ];
    expect(sut.dropHost(drops)).toBe(m.segBytes);
    expect(m.table.layersIn(k('a'), 'mem')).toEqual([]);
  });

  it.each<[string, Array<[PoolTier, string[]]>, [number, number], PoolTier[] | undefined]>([
    [
      'host held: host replicas',
      [
        ['mem', ['a']],
        ['ssd', ['a']],
      ],
      [0, 2],
      ['mem', 'mem'],
    ],
    ['SSD only: SSD replicas', [['ssd', ['a']]], [0, 2], ['ssd', 'ssd']],
    ['a layer range', [['mem', ['a']]], [1, 2], ['mem']],
    ['not held: nothing', [['mem', ['b']]], [0, 2], undefined],
    ['past the model’s layers: nothing', [['mem', ['a']]], [0, 3], undefined],
  ])('pinSlice, %s', (_name, held, [start, end], want) => {
    const { sut } = ledger({ ssd: true });
    const m = sut.add('m');
    for (const [tier, keys] of held) write(sut, 'm', tier, keys);
    const got = sut.pinSlice(k('a'), start, end);
    expect(got?.pins.map((p) => p.location.type)).toEqual(want);
    if (got) expect(got.m).toBe(m);
  });

  it('pinSlice holds nothing when a later layer is missing', () => {
    const { sut } = ledger();
    const m = sut.add('m');
    write(sut, 'm', 'mem', ['a']);
    m.table.remove(k('a'), 1, 'mem');
    expect(sut.pinSlice(k('a'), 0, 2)).toBeUndefined();
    expect(m.table.removeChunk(k('a')).every((r) => !r.deferred)).toBe(true);
  });

  it.each<[string, Array<[PoolTier, string[]]>, boolean]>([
    ['whole in host', [['mem', ['a']]], true],
    ['whole on SSD', [['ssd', ['a']]], true],
    ['not held', [['mem', ['b']]], false],
  ])('holdsWhole, %s', (_name, held, want) => {
    const { sut } = ledger({ ssd: true });
    const m = sut.add('m');
    for (const [tier, keys] of held) write(sut, 'm', tier, keys);
    expect(sut.holdsWhole(m, k('a'))).toBe(want);
  });

  it('dropChunks removes known chunks from every tier and skips unknown ones', () => {
    const { sut, changes } = ledger({ ssd: true });
    const m = sut.add('m');
    write(sut, 'm', 'mem', ['a']);
    write(sut, 'm', 'ssd', ['a']);
    sut.dropChunks(m, [k('a'), k('c')]);
    expect([m.table.positionOf(k('a')), m.table.positionOf(k('c'))]).toEqual([undefined, undefined]);
    expect(named(changes).filter((c) => c.kind === 'removed')).toEqual([
      expect.objectContaining({ keys: ['a'] }),
      expect.objectContaining({ keys: ['a'] }),
    ]);
  });

  it.each<[string, PoolTier]>([
    ['a host replica', 'mem'],
    ['an SSD replica', 'ssd'],
  ])('failCorrupt drops %s and throws DataLoss', (_name, tier) => {
    const { sut } = ledger({ ssd: true });
    const m = sut.add('m');
    write(sut, 'm', tier, ['a']);
    expect(() => sut.failCorrupt(m, k('a'), 1, tier)).toThrow(expect.objectContaining({ code: 'data_loss' }));
    expect([m.table.layersIn(k('a'), tier), sut.counters.crcFailures]).toEqual([[0], 1]);
  });
});

describe(hostPoolLayout.name, () => {
  const A = POOL_ALIGNMENT;
  it.each<[string, number, number, number[], Array<[number, number, number | undefined]>]>([
    ['no host bytes: no devices', 0, 2, [0, 1], []],
    [
      'one node: equal aligned regions, no NUMA binding',
      10 * A + 5,
      2,
      [0],
      [
        [256, 5 * A, undefined],
        [257, 5 * A, undefined],
      ],
    ],
    [
      'several nodes: one per node in turn',
      6 * A,
      3,
      [0, 1],
      [
        [256, 2 * A, 0],
        [257, 2 * A, 1],
        [258, 2 * A, 0],
      ],
    ],
  ])('%s', (_name, bytes, devices, nodes, want) => {
    expect(hostPoolLayout(bytes, devices, nodes).map((d) => [d.index, d.bytes, d.numaNode])).toEqual(want);
  });
});
