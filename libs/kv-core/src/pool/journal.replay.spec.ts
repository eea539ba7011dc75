import { ExtentAllocator } from './extent.allocator.js';
import { decodeJournal, encodeRecords, JOURNAL_VERSION, type JournalHeader, type JournalRecord } from './journal.codec.js';
import { compactJournal, emptyJournal, journalReplayable, putRecord, replayJournal } from './journal.replay.js';
import { LookupTable } from './lookup.table.js';
import { seeded } from '../testing/seeded.random.js';

const U = 4096;
const key = (i: number): string => i.toString(16).padStart(32, '0');
const header: JournalHeader = { kind: 'header', version: JOURNAL_VERSION, numLayers: 2, snapshot: false, entries: 0, createdMs: 0 };
const put = (i: number, layer: number, unit: number, device = 0, stampMs = 100): JournalRecord =>
  putRecord(
    { chunkKey: key(i), position: i, layer },
    { deviceIndex: device, type: 'ssd', offset: unit * U, length: U, crc32c: i },
    stampMs,
  );

function fresh(): [LookupTable, Map<number, ExtentAllocator>] {
  return [new LookupTable({ numLayers: 2, ttlMs: 1000 }), new Map([0, 1].map((d) => [d, new ExtentAllocator(16 * U, U)]))];
}

const used = (a: ExtentAllocator): number => a.stats().usedBytes / U;

describe(replayJournal.name, () => {
  it('rebuilds SSD entries and used extents from puts, removes and touches', () => {
    const [table, allocs] = fresh();
    const records = [
      put(0, 0, 0),
      put(0, 1, 1),
      put(1, 0, 2, 1),
      { kind: 'remove', chunkKey: key(0), layer: 1 } as JournalRecord,
      put(0, 1, 5),
      { kind: 'touch', chunkKeys: [key(1), key(7)], stampMs: 900 } as JournalRecord,
    ];
    const report = replayJournal(decodeJournal(encodeRecords([header, ...records])), table, allocs);
    expect(report).toEqual({ applied: 3, dropped: [] });
    expect(table.get(key(0), 1, 'ssd')?.offset).toBe(5 * U);
    expect(table.get(key(1), 0, 'ssd')).toEqual({ deviceIndex: 1, type: 'ssd', offset: 2 * U, length: U, crc32c: 1 });
    expect(allocs.get(0)!.freeExtents()).toEqual([
      { offset: U, length: 4 * U },
      { offset: 6 * U, length: 10 * U },
    ]);
    expect(used(allocs.get(1)!)).toBe(1);
    expect([table.lastAccess(key(0)), table.lastAccess(key(1)), table.lastAccess(key(7))]).toEqual([100, 900, undefined]);
    // Restored entries expire by their journaled stamps.
    expect(table.expire(1101).map((r) => r.chunkKey)).toEqual([key(0), key(0)]);
    table.checkInvariant();
  });

  const drops: Array<[string, JournalRecord[], string]> = [
    ['a device this node does not have', [put(1, 0, 0, 7)], 'unknown-device'],
    ['a replica past the end of the device', [put(1, 0, 16)], 'out-of-range'],
    ['a replica overlapping one applied before it', [put(1, 0, 3), put(2, 0, 3)], 'overlap'],
    ['a chunk at two positions', [put(1, 0, 0), { ...(put(1, 1, 1) as object), position: 9 } as JournalRecord], 'position-conflict'],
  ];
  it.each(drops)('drops %s and reports why', (_name, records, reason) => {
    const [table, allocs] = fresh();
    const report = replayJournal(decodeJournal(encodeRecords([header, ...records])), table, allocs);
    expect(report.dropped.map((d) => d.reason)).toEqual([reason]);
    expect(report.applied).toBe(records.length - 1);
    expect(used(allocs.get(0)!)).toBe(records.length - 1);
    table.checkInvariant();
    allocs.get(0)!.checkInvariant();
  });

  it('drops a replica the table already holds', () => {
    const [table, allocs] = fresh();
    table.put({ chunkKey: key(1), position: 1, layer: 0 }, { deviceIndex: 0, type: 'ssd', offset: 8 * U, length: U, crc32c: 0 }, 1);
    expect(replayJournal(decodeJournal(encodeRecords([header, put(1, 0, 0)])), table, allocs).dropped).toEqual([
      { chunkKey: key(1), layer: 0, reason: 'duplicate' },
    ]);
  });

  it.each([
    ['no header', new Uint8Array(0), 'no-header'],
    ['another layer count', encodeRecords([{ ...header, numLayers: 3 }, put(1, 0, 0)]), 'layer-mismatch'],
  ])('applies nothing from a journal with %s', (_name, bytes, rejected) => {
    const [table, allocs] = fresh();
    expect(replayJournal(decodeJournal(bytes), table, allocs)).toEqual({ applied: 0, dropped: [], rejected });
    expect(table.chunkCount).toBe(0);
  });

  it('applies everything before a torn tail and nothing after', () => {
    const [table, allocs] = fresh();
    const bytes = encodeRecords([header, put(0, 0, 0), put(1, 0, 1)]);
    replayJournal(decodeJournal(bytes.subarray(0, bytes.length - 3)), table, allocs);
    expect([...table.entries('ssd')].map((e) => e.chunkKey)).toEqual([key(0)]);
    expect(used(allocs.get(0)!)).toBe(1);
  });
});

describe('journal damage', () => {
  it('never throws on damaged input and leaves table and allocators consistent', () => {
    const rand = seeded(31337);
    const records: JournalRecord[] = [];
    for (let i = 0; i < 40; i++) {
      const op = rand(4);
      if (op < 2) records.push(put(rand(8), rand(2), rand(16), rand(3), rand(2000)));
      else if (op === 2) records.push({ kind: 'remove', chunkKey: key(rand(8)), layer: rand(2) });
      else records.push({ kind: 'touch', chunkKeys: [key(rand(8))], stampMs: rand(5000) });
    }
    const clean = encodeRecords([header, ...records]);
    for (let trial = 0; trial < 300; trial++) {
      const bytes = clean.slice(0, rand(clean.length + 1));
      for (let k = rand(4); k > 0 && bytes.length > 0; k--) bytes[rand(bytes.length)] = rand(256);
      const [table, allocs] = fresh();
      const decoded = decodeJournal(bytes);
      const report = replayJournal(decoded, table, allocs);
      expect(report.applied).toBe([...table.entries('ssd')].length);
      table.checkInvariant();
      for (const a of allocs.values()) a.checkInvariant();
      const used = [...allocs.values()].reduce((z, a) => z + a.stats().usedBytes, 0);
      expect(used).toBe(table.stats('ssd').segments * U);
    }
    expect(() => decodeJournal(Uint8Array.from({ length: 4096 }, () => rand(256)))).not.toThrow();
  });
});

describe(compactJournal.name, () => {
  it('writes the live SSD state as a snapshot that replays to the same table and extents', () => {
    const [table, allocs] = fresh();
    for (let i = 0; i < 6; i++) {
      for (let layer = 0; layer < 2; layer++) {
        const offset = allocs.get(i % 2)!.allocate(U)!;
        table.put(
          { chunkKey: key(i), position: i, layer },
          { deviceIndex: i % 2, type: 'ssd', offset, length: U, crc32c: i * 10 + layer },
          50 + i,
        );
      }
    }
    table.put({ chunkKey: key(0), position: 0, layer: 0 }, { deviceIndex: 0, type: 'mem', offset: 0, length: U, crc32c: 0 }, 60);
    for (const r of table.evict('ssd', 3 * U, { lastTier: false }))
      allocs.get(r.location.deviceIndex)!.free(r.location.offset, r.location.length);
    table.touch([key(4)], 500);

    const snapshot = decodeJournal(compactJournal(table, 1234));
    expect(snapshot).toMatchObject({ end: 'clean', snapshotComplete: true, header: { snapshot: true, entries: 9, createdMs: 1234 } });

    const [restored, restoredAllocs] = fresh();
    expect(replayJournal(snapshot, restored, restoredAllocs)).toEqual({ applied: 9, dropped: [] });
    const view = (t: LookupTable): unknown[] =>
      [...t.entries('ssd')].sort((a, b) => a.chunkKey.localeCompare(b.chunkKey) || a.layer - b.layer);
    expect(view(restored)).toEqual(view(table));
    for (const d of [0, 1]) expect(restoredAllocs.get(d)!.freeExtents()).toEqual(allocs.get(d)!.freeExtents());
    expect(restored.stats('mem').segments).toBe(0);
    restored.checkInvariant();
  });

  it('compacts an empty table to a header alone', () => {
    const [table] = fresh();
    expect(decodeJournal(compactJournal(table, 0))).toMatchObject({ end: 'clean', records: [], header: { entries: 0 } });
  });
});

describe(journalReplayable.name, () => {
  const log = encodeRecords([header, put(1, 0, 0)]);
  it.each<[string, Uint8Array, number, boolean]>([
    ['a clean log of this geometry', log, 2, true],
    ['a torn tail: cut back, then replayed', log.subarray(0, log.length - 3), 2, true],
    ['a corrupt last record: cut back, then replayed', Uint8Array.from(log, (b, i) => (i === log.length - 1 ? b ^ 0xff : b)), 2, true],
    ['another geometry', log, 3, false],
    ['empty', new Uint8Array(0), 2, false],
    ['not a journal', new TextEncoder().encode('not a journal at all, just text'), 2, false],
  ])('%s', (_, bytes, numLayers, want) => {
    expect(journalReplayable(decodeJournal(bytes), numLayers)).toBe(want);
  });

  it('an empty journal is a replayable header with nothing after it', () => {
    const decoded = decodeJournal(emptyJournal(2, 1234));
    expect(decoded.header).toEqual({ ...header, createdMs: 1234 });
    expect(decoded.records).toEqual([]);
    expect(journalReplayable(decoded, 2)).toBe(true);
  });
});
