import { ExtentAllocator } from '../pool/extent.allocator.js';
import type { PoolTier } from '../pool/pool.types.js';
import { PromotionBooks, type PromotedSegment } from './promotion.books.js';
import { POOL_ALIGNMENT, TierLedger, type JournalSink, type LedgerDevice } from './tier.ledger.js';

/** A chunk key named by one hex letter: `k('a')` is `aaa…a`. */
const k = (name: string): string => name.repeat(32);

class Ledger extends TierLedger<LedgerDevice, JournalSink> {
  add(model: string) {
    return this.register(model, { layers: 2, rowElems: 1 });
  }
}

/** A ledger over `hostSlots` host slots (device 256; none: no host tier) and an SSD device (0) holding chunks a and b. */
function setup(hostSlots: number) {
  const dev = (index: number, type: PoolTier, slots: number): LedgerDevice => ({
    index,
    type,
    allocator: new ExtentAllocator(slots * POOL_ALIGNMENT, POOL_ALIGNMENT),
    bandwidth: 1,
  });
  const ledger = new Ledger(
    [...(hostSlots > 0 ? [dev(256, 'mem', hostSlots)] : []), dev(0, 'ssd', 8)],
    Infinity,
    () => {},
    () => 1000,
  );
  const m = ledger.add('m');
  const ssd = ledger.device(0);
  ledger.put(
    m,
    ['a', 'b'].flatMap((name, position) =>
      [0, 1].map((layer) => ({
        seg: { chunkKey: k(name), position, layer },
        location: { deviceIndex: 0, type: 'ssd' as const, offset: ssd.allocator.allocate(m.stride)!, length: m.segBytes, crc32c: 7 },
      })),
    ),
  );
  const src = (name: string, layer: number): PromotedSegment => ({ key: k(name), layer, pinned: m.table.pin(k(name), layer, 'ssd')! });
  return { ledger, m, sut: new PromotionBooks<PromotedSegment>(ledger, m), src };
}

/** Marks a (chunk, layer) as promoted by another restore meanwhile. */
function promotedElsewhere(ledger: Ledger, name: string, layer: number): void {
  const m = ledger.model('m');
  const offset = ledger.device(256).allocator.allocate(m.stride)!;
  ledger.put(m, [
    { seg: { chunkKey: k(name), position: 0, layer }, location: { deviceIndex: 256, type: 'mem', offset, length: m.segBytes, crc32c: 7 } },
  ]);
}

describe(PromotionBooks.name, () => {
  it.each<[string, number, number, number]>([
    // [host slots, segments, to scratch]
    ['room for all: every segment to a host slot', 8, 3, 0],
    ['room for some: the rest to scratch', 2, 3, 1],
    ['no host tier: all to scratch', 0, 3, 3],
  ])('plans %s', (_name, hostSlots, n, scratch) => {
    const { sut, src, m } = setup(hostSlots);
    const srcs = [src('a', 0), src('a', 1), src('b', 0)].slice(0, n);
    const plan = sut.plan(srcs);
    expect(plan.scratchSegments).toBe(scratch);
    const toScratch = srcs.map((s) => plan.targets.get(s)!).filter((t) => t.deviceIndex === undefined);
    expect(toScratch.map((t) => t.offset)).toEqual(Array.from({ length: scratch }, (_, i) => i * m.stride));
  });

  it('gives a plan’s host slots back', () => {
    const { sut, src, ledger } = setup(2);
    sut.unplan(sut.plan([src('a', 0), src('a', 1)]));
    expect(ledger.device(256).allocator.stats().freeBytes).toBe(2 * POOL_ALIGNMENT);
  });

  it.each<[string, boolean, boolean, { hostLayers: number[]; pending: boolean; orphans: number; pins: number }]>([
    ['checked on the way in: joins the host tier, pinned', true, false, { hostLayers: [0], pending: false, orphans: 0, pins: 1 }],
    ['checked, but promoted by another restore first: an orphan', true, true, { hostLayers: [0], pending: false, orphans: 1, pins: 0 }],
    ['unchecked: pending until the copy checks it', false, false, { hostLayers: [], pending: true, orphans: 0, pins: 0 }],
  ])('a read landed, %s', (_name, checked, elsewhere, want) => {
    const { sut, src, ledger, m } = setup(8);
    const s = src('a', 0);
    const plan = sut.plan([s]);
    if (elsewhere) promotedElsewhere(ledger, 'a', 0);
    sut.landed([s], plan, checked);
    expect(m.table.layersIn(k('a'), 'mem')).toEqual(want.hostLayers);
    expect([s.pending !== undefined, sut.orphans.length, sut.pins.length]).toEqual([want.pending, want.orphans, want.pins]);
  });

  it('a read into scratch never joins the host tier', () => {
    const { sut, src, m } = setup(0);
    const s = src('a', 0);
    sut.landed([s], sut.plan([s]), true);
    expect([m.table.layersIn(k('a'), 'mem'), s.pending, sut.pins.length]).toEqual([[], undefined, 0]);
  });

  it.each<[string, 'none' | 'elsewhere' | 'gone', { hostLayers: number[]; orphans: number; pins: number }]>([
    ['verified by the copy: joins the host tier, pinned', 'none', { hostLayers: [0], orphans: 0, pins: 1 }],
    ['promoted by another restore meanwhile: an orphan', 'elsewhere', { hostLayers: [0], orphans: 1, pins: 0 }],
    ['the chunk left the table since it was read: an orphan', 'gone', { hostLayers: [], orphans: 1, pins: 0 }],
  ])('keep: %s', (_name, meanwhile, want) => {
    const { sut, src, ledger, m } = setup(8);
    const s = src('a', 0);
    sut.landed([s], sut.plan([s]), false);
    if (meanwhile === 'elsewhere') promotedElsewhere(ledger, 'a', 0);
    if (meanwhile === 'gone') {
      ledger.unpin(m, [s.pinned]);
      ledger.applyRemovals(m, m.table.removeChunk(k('a')));
    }
    sut.keep([s]);
    expect(m.table.layersIn(k('a'), 'mem')).toEqual(want.hostLayers);
    expect([s.pending, sut.orphans.length, sut.pins.length]).toEqual([undefined, want.orphans, want.pins]);
  });

  it.each<[string, boolean, number]>([
    ['promoted by another restore: pinned, to read instead', true, 1],
    ['not in the host tier: nothing', false, 0],
  ])('pinHostCopy, %s', (_name, elsewhere, pins) => {
    const { sut, src, ledger } = setup(8);
    if (elsewhere) promotedElsewhere(ledger, 'a', 0);
    const pin = sut.pinHostCopy(src('a', 0));
    expect([pin?.location.type, sut.pins.length]).toEqual([elsewhere ? 'mem' : undefined, pins]);
  });
});
