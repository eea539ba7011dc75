import type { ExtentAllocator } from './extent.allocator.js';
import { encodeRecords, JOURNAL_VERSION, type DecodedJournal, type JournalPut, type JournalRecord } from './journal.codec.js';
import type { LookupTable } from './lookup.table.js';
import type { SegmentLocation, SegmentRef } from './pool.types.js';

export type ReplayDropReason = 'unknown-device' | 'out-of-range' | 'overlap' | 'duplicate' | 'position-conflict';

export interface ReplayReport {
  /** SSD replicas now in the table (and reserved in their allocators). */
  readonly applied: number;
  /** Puts that survived the log but could not be trusted; their space stays free. */
  readonly dropped: ReadonlyArray<{ readonly chunkKey: string; readonly layer: number; readonly reason: ReplayDropReason }>;
  /** Set when nothing was applied because the journal does not fit this table. */
  readonly rejected?: 'no-header' | 'layer-mismatch';
}

/**
 * Rebuilds the SSD side of a lookup table and the SSD allocators' used extents from a decoded
 * journal (a snapshot and/or a log, in order). Puts and removes fold into the live set first,
 * so a replica written and removed again never touches an allocator; then each live put is
 * checked and applied; then touches bring stamps up to date.
 *
 * Replay trusts nothing it can check: a put naming an unknown device, lying outside it,
 * overlapping a replica applied before it, already in the table, or giving a chunk a second
 * position is dropped and reported — never thrown — so a damaged journal costs cache hits,
 * not a node. Payload CRCs are checked when a replica is read, not here.
 */
export function replayJournal(journal: DecodedJournal, table: LookupTable, allocators: ReadonlyMap<number, ExtentAllocator>): ReplayReport {
  if (!journal.header) return { applied: 0, dropped: [], rejected: 'no-header' };
  if (journal.header.numLayers !== table.numLayers) return { applied: 0, dropped: [], rejected: 'layer-mismatch' };
  const live = new Map<string, JournalPut>();
  const touched = new Map<string, number>();
  for (const r of journal.records) {
    if (r.kind === 'put') {
      const id = `${r.chunkKey}/${r.layer}`;
      live.delete(id); // a re-put moves to the end, after anything it may overlap
      live.set(id, r);
    } else if (r.kind === 'remove') live.delete(`${r.chunkKey}/${r.layer}`);
    else if (r.kind === 'touch') for (const k of r.chunkKeys) touched.set(k, Math.max(touched.get(k) ?? 0, r.stampMs));
  }
  const dropped: Array<{ chunkKey: string; layer: number; reason: ReplayDropReason }> = [];
  let applied = 0;
  for (const r of live.values()) {
    const reason = check(r, table, allocators);
    if (reason) {
      dropped.push({ chunkKey: r.chunkKey, layer: r.layer, reason });
      continue;
    }
    allocators.get(r.deviceIndex)!.reserve(r.offset, r.length);
    table.put(segmentOf(r), locationOf(r), r.stampMs);
    applied++;
  }
  for (const [k, stamp] of touched) table.touch([k], stamp);
  return { applied, dropped };
}

function check(r: JournalPut, table: LookupTable, allocators: ReadonlyMap<number, ExtentAllocator>): ReplayDropReason | null {
  const alloc = allocators.get(r.deviceIndex);
  if (!alloc) return 'unknown-device';
  const end = r.offset + Math.ceil(r.length / alloc.alignment) * alloc.alignment;
  if (r.offset % alloc.alignment !== 0 || end > alloc.capacity) return 'out-of-range';
  if (table.get(r.chunkKey, r.layer, 'ssd')) return 'duplicate';
  const pos = table.positionOf(r.chunkKey);
  if (pos !== undefined && pos !== r.position) return 'position-conflict';
  if (!alloc.isFree(r.offset, r.length)) return 'overlap';
  return null;
}

/**
 * The live SSD state as a snapshot journal: a header saying how many puts follow, then one
 * put per SSD replica with its chunk's last access. Write it to a new file, fsync, rename
 * over the old journal, then keep appending to it.
 */
export function compactJournal(table: LookupTable, createdMs: number): Uint8Array {
  const puts: JournalRecord[] = [];
  for (const e of table.entries('ssd')) puts.push(putRecord(e, e.location, e.stampMs));
  return encodeRecords([
    { kind: 'header', version: JOURNAL_VERSION, numLayers: table.numLayers, snapshot: true, entries: puts.length, createdMs },
    ...puts,
  ]);
}

/** A journal with nothing in it yet: its header alone (a new log, or one replacing a file that cannot be replayed). */
export function emptyJournal(numLayers: number, createdMs: number): Uint8Array {
  return encodeRecords([{ kind: 'header', version: JOURNAL_VERSION, numLayers, snapshot: false, entries: 0, createdMs }]);
}

/**
 * Whether a decoded journal is one to replay and append to for a model of `numLayers` layers: a
 * header of that geometry, ending where a cut back to `validBytes` mends it (clean, torn or
 * corrupt). Otherwise (empty, not a journal, another version or geometry) a fresh log replaces it.
 */
export function journalReplayable(decoded: DecodedJournal, numLayers: number): boolean {
  return (
    decoded.header !== undefined &&
    decoded.header.numLayers === numLayers &&
    (decoded.end === 'clean' || decoded.end === 'torn' || decoded.end === 'corrupt')
  );
}

/** The record to append after `table.put(seg, location, stampMs)` of an SSD replica. */
export function putRecord(seg: SegmentRef, location: SegmentLocation, stampMs: number): JournalPut {
  const { deviceIndex, offset, length, crc32c } = location;
  return { kind: 'put', chunkKey: seg.chunkKey, position: seg.position, layer: seg.layer, deviceIndex, offset, length, crc32c, stampMs };
}

function segmentOf(r: JournalPut): SegmentRef {
  return { chunkKey: r.chunkKey, position: r.position, layer: r.layer };
}

function locationOf(r: JournalPut): SegmentLocation {
  return { deviceIndex: r.deviceIndex, type: 'ssd', offset: r.offset, length: r.length, crc32c: r.crc32c };
}
