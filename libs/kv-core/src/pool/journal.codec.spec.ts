import { crc32c } from './crc32c.checksum.js';
import {
  decodeJournal,
  encodeRecord,
  journalFileName,
  encodeRecords,
  JOURNAL_VERSION,
  type JournalHeader,
  type JournalRecord,
} from './journal.codec.js';

const key = (i: number): string => i.toString(16).padStart(32, '0');
const header: JournalHeader = {
  kind: 'header',
  version: JOURNAL_VERSION,
  numLayers: 4,
  snapshot: false,
  entries: 0,
  createdMs: 1_700_000_000_000,
};
const put = (i: number, layer = 0, offset = i * 4096): JournalRecord => ({
  kind: 'put',
  chunkKey: key(i),
  position: i,
  layer,
  deviceIndex: 1,
  offset,
  length: 4096,
  crc32c: 0xe3069283,
  stampMs: 1000 + i,
});

/** Re-seals a record after a test edits its payload, so only the edit is wrong, not the CRC. */
function reseal(rec: Uint8Array): Uint8Array {
  new DataView(rec.buffer).setUint32(rec.length - 4, crc32c(rec.subarray(0, rec.length - 4)), true);
  return rec;
}

describe(encodeRecord.name, () => {
  const records: Array<[string, JournalRecord, number]> = [
    ['header', header, 30],
    ['snapshot header', { ...header, snapshot: true, entries: 7 }, 30],
    ['put', put(3, 2), 57],
    ['put at an offset past 4 GiB (5 TB)', put(1, 0, 5e12), 57],
    ['remove', { kind: 'remove', chunkKey: key(9), layer: 3 }, 27],
    ['touch of three chunks', { kind: 'touch', chunkKeys: [key(1), key(2), key(3)], stampMs: 12.5 }, 69],
    ['touch of none', { kind: 'touch', chunkKeys: [], stampMs: 0 }, 21],
  ];
  it.each(records)('round-trips a %s (%#) in its fixed size', (_name, record, size) => {
    const bytes = record.kind === 'header' ? encodeRecord(record) : encodeRecords([header, record]);
    const decoded = decodeJournal(bytes);
    expect(decoded.end).toBe('clean');
    expect(decoded.validBytes).toBe(bytes.length);
    if (record.kind === 'header') expect(decoded.header).toEqual(record);
    else expect(decoded.records).toEqual([record]);
    expect(encodeRecord(record).length).toBe(size);
  });

  it('pins the byte layout of a put (a contract with files on disk)', () => {
    const bytes = encodeRecord(put(1, 2, 2 ** 32 + 8192));
    const v = new DataView(bytes.buffer);
    expect([v.getUint32(0, true), bytes[4]]).toEqual([49, 2]);
    expect(Buffer.from(bytes.subarray(5, 21)).toString('hex')).toBe(key(1));
    expect([v.getUint32(21, true), v.getUint16(25, true), v.getUint16(27, true)]).toEqual([1, 2, 1]);
    expect([v.getUint32(29, true), v.getUint32(33, true), v.getUint32(37, true)]).toEqual([8192, 1, 4096]);
    expect([v.getUint32(41, true), v.getFloat64(45, true)]).toEqual([0xe3069283, 1001]);
    expect(v.getUint32(53, true)).toBe(crc32c(bytes.subarray(0, 53)));
  });

  const bad: Array<[string, JournalRecord]> = [
    ['a negative offset', { ...(put(1) as object), offset: -1 } as JournalRecord],
    ['a layer past u16', { kind: 'remove', chunkKey: key(1), layer: 70000 }],
    ['a length past u32', { ...(put(1) as object), length: 2 ** 32 } as JournalRecord],
    ['a NaN stamp', { kind: 'touch', chunkKeys: [], stampMs: NaN }],
    ['a header with no layers', { ...header, numLayers: 0 }],
  ];
  it.each(bad)('rejects %s', (_name, record) => {
    expect(() => encodeRecord(record)).toThrow(RangeError);
  });

  it('rejects a malformed chunk key', () => {
    expect(() => encodeRecord({ kind: 'remove', chunkKey: 'XYZ', layer: 0 })).toThrow(/32 lowercase hex/);
  });
});

describe(decodeJournal.name, () => {
  const log = [put(1), put(2), { kind: 'remove', chunkKey: key(1), layer: 0 } as JournalRecord, put(3)];
  const bytes = encodeRecords([header, ...log]);
  const lastStart = bytes.length - 57;

  it('reads a clean log', () => {
    expect(decodeJournal(bytes)).toEqual({ header, records: log, validBytes: bytes.length, end: 'clean', snapshotComplete: true });
  });

  it('calls an empty file empty', () => {
    expect(decodeJournal(new Uint8Array(0))).toMatchObject({ end: 'empty', validBytes: 0, records: [] });
  });

  it('stops cleanly before a torn last record, wherever the tear is', () => {
    for (let cut = lastStart + 1; cut < bytes.length; cut++) {
      const got = decodeJournal(bytes.subarray(0, cut));
      expect([got.end, got.validBytes, got.records.length]).toEqual(['torn', lastStart, 3]);
    }
    expect(decodeJournal(bytes.subarray(0, lastStart))).toMatchObject({ end: 'clean', validBytes: lastStart });
  });

  it('never accepts the last record with any single bit flipped', () => {
    for (let at = lastStart; at < bytes.length; at++) {
      for (let bit = 0; bit < 8; bit++) {
        const damaged = bytes.slice();
        damaged[at]! ^= 1 << bit;
        const got = decodeJournal(damaged);
        expect(got.records).toEqual(log.slice(0, 3));
        expect(['torn', 'corrupt']).toContain(got.end);
        expect(got.validBytes).toBe(lastStart);
      }
    }
  });

  it('stops at a corrupt record in the middle and keeps what came before', () => {
    const damaged = bytes.slice();
    damaged[30 + 57 + 10]! ^= 0xff; // inside the second put
    expect(decodeJournal(damaged)).toMatchObject({ end: 'corrupt', validBytes: 30 + 57, records: [put(1)] });
  });

  it('treats zeros after the last record (a file extended but not written) as corrupt, not as records', () => {
    const padded = new Uint8Array(bytes.length + 64);
    padded.set(bytes);
    expect(decodeJournal(padded)).toMatchObject({ end: 'corrupt', validBytes: bytes.length, records: log });
  });

  const headers: Array<[string, Uint8Array, string]> = [
    ['random bytes', Uint8Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff), 'corrupt'],
    ['a put where the header should be', encodeRecord(put(1)), 'bad-header'],
    ['a wrong magic with a valid CRC', reseal(encodeRecord(header).fill(0x41, 5, 9)), 'bad-header'],
    ['a newer version', encodeRecord({ ...header, version: JOURNAL_VERSION + 1 }), 'unsupported-version'],
    ['half a header', encodeRecord(header).subarray(0, 12), 'torn'],
  ];
  it.each(headers)('refuses %s at the start', (_name, start, end) => {
    expect(decodeJournal(start)).toMatchObject({ end, validBytes: 0, records: [] });
  });

  it('calls a well-sealed record that makes no sense corrupt (layer past the header’s count)', () => {
    const wrong = encodeRecord(put(1, 3));
    new DataView(wrong.buffer).setUint16(25, 4, true);
    const journal = new Uint8Array([...encodeRecords([header, put(2)]), ...reseal(wrong)]);
    expect(decodeJournal(journal)).toMatchObject({ end: 'corrupt', records: [put(2)] });
  });

  it('calls a second header corrupt', () => {
    expect(decodeJournal(encodeRecords([header, put(1), header]))).toMatchObject({ end: 'corrupt', records: [put(1)] });
  });

  it.each([
    ['all entries present', 2, 2, true],
    ['an entry missing', 3, 2, false],
  ])('reports a snapshot with %s', (_name, entries, present, complete) => {
    const snap = encodeRecords([{ ...header, snapshot: true, entries }, ...[put(1), put(2)].slice(0, present)]);
    expect(decodeJournal(snap).snapshotComplete).toBe(complete);
  });
});

describe(journalFileName.name, () => {
  it.each([
    ['a plain id as it is', 'mnemo-small', 'journal-mnemo-small.mkvj'],
    ['dots and underscores kept', 'llama_3.1', 'journal-llama_3.1.mkvj'],
    ['slashes and spaces made safe', 'org/model v2', 'journal-org_model_v2.mkvj'],
  ])('%s', (_name, id, want) => {
    expect(journalFileName(id)).toBe(want);
  });
});
