import { decode } from '@msgpack/msgpack';
import { Float64, MsgMap, encodeMsgpack, type MsgValue } from './msgpack.writer.js';

/**
 * vLLM's KV event wire format (`vllm/distributed/kv_events.py`), as its ZMQ publisher sends it:
 * an `EventBatch` (msgspec `array_like`, `omit_defaults`) = `[ts: float, events, data_parallel_rank?]`,
 * each event a msgspec tagged struct whose tag field is `"type"`:
 *
 * - BlockStored: block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name
 *   (then defaulted fields — extra_keys, group_idx, kv_cache_spec_kind, … — left out when unset)
 * - BlockRemoved: block_hashes, medium (group_idx … when set)
 * - AllBlocksCleared: nothing
 *
 * Since vllm-project/vllm#42892 (merged 2026-06-09) each event is a **map** keyed by field name;
 * before it, a positional array `[tag, field, …]` (the layout of vllm-project/vllm at b4e69e0a,
 * `medium` added later by #19737, `lora_name` by #27577). We write the map layout, field order as
 * declared; we read both. A block hash is an `ExternalBlockHash`: an int (vLLM's default, the last
 * 8 bytes of its hash) or bytes.
 */
export type VllmBlockHash = bigint | number | Uint8Array;

export interface VllmBlockStored {
  readonly type: 'BlockStored';
  readonly blockHashes: readonly VllmBlockHash[];
  readonly parentBlockHash: VllmBlockHash | null;
  readonly tokenIds: readonly number[];
  readonly blockSize: number;
  readonly loraId: number | null;
  readonly medium: string | null;
  readonly loraName: string | null;
}
export interface VllmBlockRemoved {
  readonly type: 'BlockRemoved';
  readonly blockHashes: readonly VllmBlockHash[];
  readonly medium: string | null;
}
export interface VllmAllBlocksCleared {
  readonly type: 'AllBlocksCleared';
}
export type VllmKvEvent = VllmBlockStored | VllmBlockRemoved | VllmAllBlocksCleared;

export interface VllmEventBatch {
  /** Seconds since the epoch (a float). */
  readonly ts: number;
  readonly events: readonly VllmKvEvent[];
  readonly dataParallelRank?: number | null;
}

/** A payload that is not a vLLM EventBatch; `reason` is for logs and metrics. */
export class VllmEventsFormatError extends Error {
  constructor(readonly reason: string) {
    super(`not a vLLM KV event batch: ${reason}`);
  }
}

const hash = (h: VllmBlockHash): MsgValue => (typeof h === 'number' ? BigInt(h) : h);

function eventValue(e: VllmKvEvent): MsgValue {
  switch (e.type) {
    case 'BlockStored':
      return new MsgMap([
        ['type', 'BlockStored'],
        ['block_hashes', e.blockHashes.map(hash)],
        ['parent_block_hash', e.parentBlockHash === null ? null : hash(e.parentBlockHash)],
        ['token_ids', [...e.tokenIds]],
        ['block_size', e.blockSize],
        ['lora_id', e.loraId],
        ['medium', e.medium],
        ['lora_name', e.loraName],
      ]);
    case 'BlockRemoved':
      return new MsgMap([
        ['type', 'BlockRemoved'],
        ['block_hashes', e.blockHashes.map(hash)],
        ['medium', e.medium],
      ]);
    case 'AllBlocksCleared':
      return new MsgMap([['type', 'AllBlocksCleared']]);
  }
}

/** The msgpack payload of one batch (the third frame of a ZMQ message). */
export function encodeVllmEventBatch(batch: VllmEventBatch): Uint8Array {
  const fields: MsgValue[] = [new Float64(batch.ts), batch.events.map(eventValue)];
  // omit_defaults + array_like: a trailing field at its default (None) is left out.
  if (batch.dataParallelRank !== undefined && batch.dataParallelRank !== null) fields.push(batch.dataParallelRank);
  return encodeMsgpack(fields);
}

/** Reads a batch in either event layout; throws VllmEventsFormatError naming the first problem. */
export function decodeVllmEventBatch(payload: Uint8Array): VllmEventBatch {
  let raw: unknown;
  try {
    raw = decode(payload, { useBigInt64: true });
  } catch (e) {
    throw new VllmEventsFormatError(`msgpack: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!Array.isArray(raw) || raw.length < 2) throw new VllmEventsFormatError('an EventBatch is an array [ts, events, …]');
  const [ts, events, dp] = raw as unknown[];
  if (typeof ts !== 'number' && typeof ts !== 'bigint') throw new VllmEventsFormatError('ts is not a number');
  if (!Array.isArray(events)) throw new VllmEventsFormatError('events is not an array');
  return {
    ts: Number(ts),
    events: events.flatMap((e, i) => decodeEvent(e, i)),
    dataParallelRank: dp === undefined || dp === null ? null : Number(dp),
  };
}

/** An event's fields by name, from either layout; unknown tags are skipped (forward compatibility). */
function decodeEvent(raw: unknown, i: number): VllmKvEvent[] {
  let f: Record<string, unknown>;
  if (Array.isArray(raw)) {
    const [tag, ...rest] = raw as unknown[];
    const names = POSITIONAL[String(tag)];
    if (!names) return [];
    f = { type: tag, ...Object.fromEntries(names.map((n, j) => [n, rest[j]])) };
  } else if (raw !== null && typeof raw === 'object' && !(raw instanceof Uint8Array)) {
    f = raw as Record<string, unknown>;
  } else throw new VllmEventsFormatError(`event ${i} is neither a map nor an array`);
  const bad = (what: string) => new VllmEventsFormatError(`event ${i} (${String(f.type)}): ${what}`);
  switch (f.type) {
    case 'BlockStored': {
      const tokenIds = f.token_ids;
      if (!Array.isArray(tokenIds) || !tokenIds.every((t) => typeof t === 'number' && Number.isInteger(t) && t >= 0))
        throw bad('token_ids is not a list of token ids');
      if (typeof f.block_size !== 'number' || !Number.isInteger(f.block_size) || f.block_size <= 0)
        throw bad('block_size is not a positive int');
      return [
        {
          type: 'BlockStored',
          blockHashes: hashes(f.block_hashes, bad),
          parentBlockHash: f.parent_block_hash === null || f.parent_block_hash === undefined ? null : oneHash(f.parent_block_hash, bad),
          tokenIds: tokenIds as number[],
          blockSize: f.block_size,
          loraId: typeof f.lora_id === 'number' ? f.lora_id : null,
          medium: typeof f.medium === 'string' ? f.medium : null,
          loraName: typeof f.lora_name === 'string' ? f.lora_name : null,
        },
      ];
    }
    case 'BlockRemoved':
      return [{ type: 'BlockRemoved', blockHashes: hashes(f.block_hashes, bad), medium: typeof f.medium === 'string' ? f.medium : null }];
    case 'AllBlocksCleared':
      return [{ type: 'AllBlocksCleared' }];
    default:
      return [];
  }
}

/** Field names of the positional layout, in declaration order. */
const POSITIONAL: Readonly<Record<string, readonly string[]>> = {
  BlockStored: ['block_hashes', 'parent_block_hash', 'token_ids', 'block_size', 'lora_id', 'medium', 'lora_name'],
  BlockRemoved: ['block_hashes', 'medium'],
  AllBlocksCleared: [],
};

function oneHash(h: unknown, bad: (w: string) => Error): VllmBlockHash {
  if (typeof h === 'bigint' || (typeof h === 'number' && Number.isInteger(h)) || h instanceof Uint8Array) return h;
  throw bad('a block hash is neither an int nor bytes');
}

function hashes(hs: unknown, bad: (w: string) => Error): VllmBlockHash[] {
  if (!Array.isArray(hs)) throw bad('block_hashes is not a list');
  return hs.map((h) => oneHash(h, bad));
}

/** One canonical string per hash, so ints of any width and bytes compare as the engine meant them. */
export function blockHashKey(h: VllmBlockHash): string {
  return h instanceof Uint8Array ? `b:${Buffer.from(h).toString('hex')}` : BigInt(h).toString();
}
