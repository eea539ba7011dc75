import { hexToKey, keyToHex } from '../keys/chunk-key.hasher.js';
import { crc32c } from './crc32c.checksum.js';

/** "MKVJ" read as a little-endian u32. */
export const JOURNAL_MAGIC = 0x4a564b4d;
export const JOURNAL_VERSION = 1;
/** Most chunk keys one touch record carries (16 M tokens of prefix). */
export const MAX_TOUCH_KEYS = 65536;

/** First record of every journal file. A snapshot (compaction output) is followed by exactly `entries` puts. */
export interface JournalHeader {
  readonly kind: 'header';
  readonly version: number;
  readonly numLayers: number;
  readonly snapshot: boolean;
  readonly entries: number;
  readonly createdMs: number;
}

/** An SSD replica was written: where, how long, its CRC32C, and the chunk's access stamp. */
export interface JournalPut {
  readonly kind: 'put';
  readonly chunkKey: string;
  readonly position: number;
  readonly layer: number;
  readonly deviceIndex: number;
  readonly offset: number;
  readonly length: number;
  readonly crc32c: number;
  readonly stampMs: number;
}

export interface JournalRemove {
  readonly kind: 'remove';
  readonly chunkKey: string;
  readonly layer: number;
}

/** One request touched these chunks at `stampMs` (keeps TTL expiry right across restarts). */
export interface JournalTouch {
  readonly kind: 'touch';
  readonly chunkKeys: readonly string[];
  readonly stampMs: number;
}

export type JournalRecord = JournalHeader | JournalPut | JournalRemove | JournalTouch;

/**
 * Why decoding stopped. `clean`: the input ended on a record boundary. `torn`: the last
 * record is cut short (a crash mid-append). `corrupt`: a complete record fails its CRC or
 * does not parse. `empty`: no bytes (a fresh journal). `bad-header` / `unsupported-version`:
 * not a journal this code can read. After `torn` or `corrupt`, truncate the file to
 * `validBytes` (or write a compaction) before appending again.
 */
export type JournalEnd = 'clean' | 'torn' | 'corrupt' | 'empty' | 'bad-header' | 'unsupported-version';

export interface DecodedJournal {
  readonly header?: JournalHeader;
  /** Records after the header, in file order, up to the first bad one. */
  readonly records: JournalRecord[];
  /** Bytes of the input that decoded (header included). */
  readonly validBytes: number;
  readonly end: JournalEnd;
  /** For a snapshot: whether all `entries` puts are present. Always true for a plain log. */
  readonly snapshotComplete: boolean;
}

const TYPE = { header: 1, put: 2, remove: 3, touch: 4 } as const;
const FRAME = 8; // u32 body length before, u32 CRC after
const PAYLOAD = { header: 21, put: 48, remove: 18 } as const;
const MAX_BODY = 1 + 12 + 16 * MAX_TOUCH_KEYS;

/**
 * Journal record format v1 — a wire contract with files already on disk; change it only
 * with a new version. Little-endian throughout:
 *
 *   u32 bodyLength (= 1 + payload) ‖ u8 type ‖ payload ‖ u32 CRC32C(bodyLength ‖ type ‖ payload)
 *
 *   header (1): u32 magic "MKVJ" ‖ u16 version ‖ u16 numLayers ‖ u8 snapshot ‖ u32 entries ‖ f64 createdMs
 *   put    (2): key[16] ‖ u32 position ‖ u16 layer ‖ u16 deviceIndex ‖ u32 offsetLo ‖ u32 offsetHi
 *               ‖ u32 length ‖ u32 crc32c ‖ f64 stampMs
 *   remove (3): key[16] ‖ u16 layer
 *   touch  (4): f64 stampMs ‖ u32 count ‖ key[16] × count
 *
 * Each record carries its own length and CRC, so a reader finds a torn or corrupt tail and
 * stops there; the CRC covers the length too, so a flipped length cannot pass as valid.
 *
 * Reference counts are not journaled: they belong to sessions, which the node keeps in memory;
 * restored counts with no session left to drop them would keep chunks from ever expiring. If
 * sessions are ever persisted, their references belong in that store (or a new record type).
 */
export function encodeRecord(r: JournalRecord): Uint8Array {
  const payload = r.kind === 'touch' ? 12 + 16 * r.chunkKeys.length : PAYLOAD[r.kind];
  const out = new Uint8Array(FRAME + 1 + payload);
  const v = new DataView(out.buffer);
  v.setUint32(0, 1 + payload, true);
  v.setUint8(4, TYPE[r.kind]);
  const p = 5;
  switch (r.kind) {
    case 'header':
      if (!Number.isInteger(r.numLayers) || r.numLayers <= 0 || r.numLayers > 0xffff) throw new RangeError(`bad numLayers ${r.numLayers}`);
      v.setUint32(p, JOURNAL_MAGIC, true);
      v.setUint16(p + 4, checkU16('version', r.version), true);
      v.setUint16(p + 6, r.numLayers, true);
      v.setUint8(p + 8, r.snapshot ? 1 : 0);
      v.setUint32(p + 9, checkU32('entries', r.entries), true);
      v.setFloat64(p + 13, checkStamp(r.createdMs), true);
      break;
    case 'put':
      out.set(hexToKey(r.chunkKey), p);
      v.setUint32(p + 16, checkU32('position', r.position), true);
      v.setUint16(p + 20, checkU16('layer', r.layer), true);
      v.setUint16(p + 22, checkU16('deviceIndex', r.deviceIndex), true);
      if (!Number.isSafeInteger(r.offset) || r.offset < 0) throw new RangeError(`bad offset ${r.offset}`);
      v.setUint32(p + 24, r.offset % 2 ** 32, true);
      v.setUint32(p + 28, Math.floor(r.offset / 2 ** 32), true);
      v.setUint32(p + 32, checkU32('length', r.length), true);
      v.setUint32(p + 36, checkU32('crc32c', r.crc32c), true);
      v.setFloat64(p + 40, checkStamp(r.stampMs), true);
      break;
    case 'remove':
      out.set(hexToKey(r.chunkKey), p);
      v.setUint16(p + 16, checkU16('layer', r.layer), true);
      break;
    case 'touch':
      if (r.chunkKeys.length > MAX_TOUCH_KEYS) throw new RangeError(`a touch record carries at most ${MAX_TOUCH_KEYS} keys`);
      v.setFloat64(p, checkStamp(r.stampMs), true);
      v.setUint32(p + 8, r.chunkKeys.length, true);
      r.chunkKeys.forEach((k, i) => out.set(hexToKey(k), p + 12 + 16 * i));
      break;
  }
  v.setUint32(out.length - 4, crc32c(out.subarray(0, out.length - 4)), true);
  return out;
}

/** Records back to back, as appended to a file. */
export function encodeRecords(records: readonly JournalRecord[]): Uint8Array {
  const parts = records.map(encodeRecord);
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Decodes a journal file's bytes up to the first torn or corrupt record. Never throws. */
export function decodeJournal(bytes: Uint8Array): DecodedJournal {
  const done = (end: JournalEnd, validBytes: number, header?: JournalHeader, records: JournalRecord[] = []): DecodedJournal => {
    const puts = header?.snapshot ? records.findIndex((r) => r.kind !== 'put') : -1;
    const complete = !header?.snapshot || (puts < 0 ? records.length : puts) >= header.entries;
    return { header, records, validBytes, end, snapshotComplete: complete };
  };
  if (bytes.length === 0) return done('empty', 0);
  const first = readFrame(bytes, 0);
  if (typeof first === 'string') return done(first, 0);
  const header = parse(first.type, first.payload, 0xffff);
  if (header?.kind !== 'header' || new DataView(first.payload.buffer, first.payload.byteOffset).getUint32(0, true) !== JOURNAL_MAGIC) {
    return done('bad-header', 0);
  }
  if (header.version !== JOURNAL_VERSION) return done('unsupported-version', 0, header);
  const records: JournalRecord[] = [];
  let at = first.next;
  while (at < bytes.length) {
    const frame = readFrame(bytes, at);
    if (typeof frame === 'string') return done(frame, at, header, records);
    const r = parse(frame.type, frame.payload, header.numLayers);
    if (!r || r.kind === 'header') return done('corrupt', at, header, records);
    records.push(r);
    at = frame.next;
  }
  return done('clean', at, header, records);
}

function readFrame(bytes: Uint8Array, at: number): { type: number; payload: Uint8Array; next: number } | 'torn' | 'corrupt' {
  if (bytes.length - at < FRAME + 1) return 'torn';
  const v = new DataView(bytes.buffer, bytes.byteOffset + at);
  const body = v.getUint32(0, true);
  if (body < 1 || body > MAX_BODY) return 'corrupt';
  if (bytes.length - at < FRAME + body) return 'torn';
  if (crc32c(bytes.subarray(at, at + 4 + body)) !== v.getUint32(4 + body, true)) return 'corrupt';
  return { type: bytes[at + 4]!, payload: bytes.subarray(at + 5, at + 4 + body), next: at + FRAME + body };
}

/** A record from a CRC-valid payload, or null if it does not make sense (a writer bug). */
function parse(type: number, p: Uint8Array, numLayers: number): JournalRecord | null {
  const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const key = (at: number): string => keyToHex(p.subarray(at, at + 16));
  switch (type) {
    case TYPE.header: {
      if (p.length !== PAYLOAD.header) return null;
      const layers = v.getUint16(6, true);
      if (layers === 0) return null;
      const snapshot = v.getUint8(8);
      if (snapshot > 1) return null;
      return {
        kind: 'header',
        version: v.getUint16(4, true),
        numLayers: layers,
        snapshot: snapshot === 1,
        entries: v.getUint32(9, true),
        createdMs: v.getFloat64(13, true),
      };
    }
    case TYPE.put: {
      if (p.length !== PAYLOAD.put) return null;
      const layer = v.getUint16(20, true);
      const offset = v.getUint32(24, true) + v.getUint32(28, true) * 2 ** 32;
      const stampMs = v.getFloat64(40, true);
      const length = v.getUint32(32, true);
      if (layer >= numLayers || !Number.isSafeInteger(offset) || length === 0 || !validStamp(stampMs)) return null;
      return {
        kind: 'put',
        chunkKey: key(0),
        position: v.getUint32(16, true),
        layer,
        deviceIndex: v.getUint16(22, true),
        offset,
        length,
        crc32c: v.getUint32(36, true),
        stampMs,
      };
    }
    case TYPE.remove: {
      if (p.length !== PAYLOAD.remove) return null;
      const layer = v.getUint16(16, true);
      return layer < numLayers ? { kind: 'remove', chunkKey: key(0), layer } : null;
    }
    case TYPE.touch: {
      if (p.length < 12) return null;
      const stampMs = v.getFloat64(0, true);
      const n = v.getUint32(8, true);
      if (p.length !== 12 + 16 * n || !validStamp(stampMs)) return null;
      return { kind: 'touch', stampMs, chunkKeys: Array.from({ length: n }, (_, i) => key(12 + 16 * i)) };
    }
    default:
      return null;
  }
}

const validStamp = (ms: number): boolean => Number.isFinite(ms) && ms >= 0;

function checkStamp(ms: number): number {
  if (!validStamp(ms)) throw new RangeError(`stamp must be a finite time ≥ 0 in ms, got ${ms}`);
  return ms;
}

function checkU32(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`${name} must fit in u32, got ${n}`);
  return n;
}

function checkU16(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 0xffff) throw new RangeError(`${name} must fit in u16, got ${n}`);
  return n;
}

/** The journal file of one model in the node's data directory: its id with anything but `[A-Za-z0-9._-]` made `_`. */
export const journalFileName = (modelId: string): string => `journal-${modelId.replace(/[^A-Za-z0-9._-]/g, '_')}.mkvj`;
