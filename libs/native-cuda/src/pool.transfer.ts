import { nativeAddon, type RawOperand } from './addon.loader.js';
import { packRows } from './flat.rows.js';
import type { HostPoolDevice } from './host-pool.device.js';
import { captureCallSite, closedError, rangeError, typeError, ValidationCode, withSite } from './native.error.js';
import { deviceInternals, type InFlightTracker } from './pool-device.internal.js';
import type { SsdPoolDevice } from './ssd-pool.device.js';

/** What a transfer reads from and writes to. Views name their own bytes. */
export type TransferOperand = ArrayBuffer | ArrayBufferView | HostPoolDevice | SsdPoolDevice;

/** Numbers per range: src, srcOffset, dst, dstOffset, length. */
export const TRANSFER_RANGE_FIELDS = 5;
/** Numbers per CRC range: operand, offset, length. */
export const CRC_RANGE_FIELDS = 3;

export interface TransferRange {
  src: number;
  srcOffset: number;
  dst: number;
  dstOffset: number;
  length: number;
}

export interface CrcRange {
  operand: number;
  offset: number;
  length: number;
}

export interface TransferOptions {
  /** `[operand, offset, length] × m` over memory operands: CRC32C of each after the transfer. */
  crcs?: Float64Array;
  /**
   * Where the bytes move (default `copy`): `copy` on the addon's copy threads; `compute` on the
   * CPU kernels' queue, between two kernel batches, spread over the kernel lanes — memory
   * operands only. For a copy that feeds the very next kernels on a machine whose cores the
   * lanes already fill (a restore into the CPU backend's KV cache): a copy thread beside them
   * would take a core from one lane while the other waits for it at the next barrier.
   */
  lane?: 'copy' | 'compute';
}

export interface TransferResult {
  /** One CRC32C per CRC range, in order (empty when none were asked for). */
  crcs: Uint32Array;
  /** How many CRC ranges were computed while copying or reading, with no second pass. */
  fusedCrcs: number;
}

/** Packs ranges into the flat `[src, srcOffset, dst, dstOffset, length] × n` layout. */
export function packTransferRanges(ranges: readonly TransferRange[]): Float64Array {
  return packRows(ranges, TRANSFER_RANGE_FIELDS, (r) => [r.src, r.srcOffset, r.dst, r.dstOffset, r.length]);
}

/** Packs CRC ranges into the flat `[operand, offset, length] × m` layout. */
export function packCrcRanges(ranges: readonly CrcRange[]): Float64Array {
  return packRows(ranges, CRC_RANGE_FIELDS, (r) => [r.operand, r.offset, r.length]);
}

interface Resolved {
  raw: RawOperand;
  ssd: boolean;
  bytes: number;
  inFlight?: InFlightTracker;
}

const tag = (v: unknown): string => Object.prototype.toString.call(v);
const EMPTY = new Float64Array(0);

function resolveOperand(v: unknown, i: number): Resolved {
  if (tag(v) === '[object ArrayBuffer]') return { raw: v as ArrayBuffer, ssd: false, bytes: (v as ArrayBuffer).byteLength };
  if (ArrayBuffer.isView(v)) {
    if (tag(v.buffer) !== '[object ArrayBuffer]') throw typeError(`operands[${i}] is a view over a SharedArrayBuffer`);
    return { raw: v, ssd: false, bytes: v.byteLength };
  }
  const inner = deviceInternals(v);
  if (inner === undefined) {
    throw typeError(`operands[${i}] must be an ArrayBuffer, an ArrayBufferView, a HostPoolDevice or an SsdPoolDevice`);
  }
  if (inner.isClosed()) throw closedError(inner.name);
  return { raw: inner.raw, ssd: inner.kind === 'ssd', bytes: inner.bytes, inFlight: inner.inFlight };
}

function requireFloat64(name: string, v: unknown, fields: number): Float64Array {
  if (tag(v) !== '[object Float64Array]') throw typeError(`${name} must be a Float64Array of ${fields}-number rows`);
  const a = v as Float64Array;
  if (a.length % fields !== 0) {
    throw rangeError(`${name}.length must be a multiple of ${fields}, got ${a.length}`, ValidationCode.InvalidArgValue);
  }
  for (let i = 0; i < a.length; i++) {
    if (!Number.isSafeInteger(a[i]) || a[i]! < 0) {
      throw rangeError(`${name}[${i}] must be a non-negative integer, got ${a[i]}`);
    }
  }
  return a;
}

function checkSide(ops: readonly Resolved[], which: string, index: number, offset: number, length: number): Resolved {
  const op = ops[index];
  if (op === undefined) throw rangeError(`${which}: operand ${index} out of range (have ${ops.length})`);
  if (offset + length > op.bytes) {
    throw rangeError(`${which}: [${offset}, +${length}) exceeds operand ${index} (${op.bytes} bytes)`);
  }
  return op;
}

function validate(operands: readonly TransferOperand[], ranges: Float64Array, crcs: Float64Array): Resolved[] {
  if (!Array.isArray(operands)) throw typeError('operands must be an array');
  const ops = operands.map(resolveOperand);
  for (let i = 0; i < ranges.length; i += TRANSFER_RANGE_FIELDS) {
    const which = `range ${i / TRANSFER_RANGE_FIELDS}`;
    const len = ranges[i + 4]!;
    const src = checkSide(ops, `${which} source`, ranges[i]!, ranges[i + 1]!, len);
    const dst = checkSide(ops, `${which} destination`, ranges[i + 2]!, ranges[i + 3]!, len);
    if (src.ssd && dst.ssd) {
      throw rangeError(`${which}: SSD to SSD is not supported; stage it through host memory`, ValidationCode.InvalidArgValue);
    }
  }
  for (let i = 0; i < crcs.length; i += CRC_RANGE_FIELDS) {
    const which = `crc ${i / CRC_RANGE_FIELDS}`;
    const op = checkSide(ops, which, crcs[i]!, crcs[i + 1]!, crcs[i + 2]!);
    if (op.ssd) throw rangeError(`${which}: CRCs are taken over memory operands, not SSD pools`, ValidationCode.InvalidArgValue);
  }
  return ops;
}

/**
 * Moves many byte ranges between JS memory, host pool devices, aligned host buffers and SSD
 * pool devices in one native call, and optionally checksums ranges of memory (CRC32C).
 * `ranges` holds `[src, srcOffset, dst, dstOffset, length]` per range, indices into
 * `operands`. Memory→memory ranges run on the addon's copy threads; ranges touching an SSD
 * pool run on that device's worker, so one call spanning several devices uses all of them
 * at once. CRC ranges tiled by the call's destinations (or sources) are computed while the
 * bytes move; others in a second pass after every write landed.
 *
 * All ranges run concurrently: a byte written by one range and read or written by another
 * refuses the whole call (NativeError `range_conflict`); SSD offsets and lengths must be
 * multiples of the device's `blockSize` (`misaligned`). Nothing moves unless the whole call
 * is valid. Keep JS buffers attached (do not transfer them) until the Promise settles; they
 * stay referenced until then.
 * @throws (rejects) TypeError / RangeError for malformed arguments; NativeError
 *   `range_conflict`, `misaligned`, `closed`, `io_error`, `out_of_memory`.
 */
export function transfer(
  operands: readonly TransferOperand[],
  ranges: Float64Array,
  options: TransferOptions = {},
): Promise<TransferResult> {
  // NOTE: no async wrapper: this is the hot path of every put and get, and each extra
  // microtask hop and closure shows at 1 MiB.
  const site = captureCallSite(transfer);
  let pending: Promise<TransferResult>;
  try {
    const r = requireFloat64('ranges', ranges, TRANSFER_RANGE_FIELDS);
    const c = options.crcs === undefined ? EMPTY : requireFloat64('options.crcs', options.crcs, CRC_RANGE_FIELDS);
    const ops = validate(operands, r, c);
    const onCompute = laneOf(options.lane) === 'compute';
    if (onCompute) {
      const i = ops.findIndex((o) => o.ssd);
      if (i >= 0)
        throw rangeError(`operands[${i}] is an SSD pool: a transfer on the compute lane moves memory only`, ValidationCode.InvalidArgValue);
    }
    const raw: RawOperand[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) raw[i] = ops[i]!.raw;
    pending = nativeAddon().transfer(raw, r, c, onCompute);
    // Registered before returning, so a close() right after this call waits for it.
    for (const o of ops) o.inFlight?.track(pending);
  } catch (err) {
    return Promise.reject(withSite(err, site));
  }
  return pending.then(undefined, (err: unknown) => {
    throw withSite(err, site);
  });
}

function laneOf(lane: unknown): 'copy' | 'compute' {
  if (lane === undefined || lane === 'copy' || lane === 'compute') return lane ?? 'copy';
  throw rangeError(`options.lane must be 'copy' or 'compute', got ${String(lane)}`, ValidationCode.InvalidArgValue);
}

/** CRC32C of many memory ranges in one call on the copy threads (`[operand, offset, length] × m`). */
export async function crc32cRanges(operands: readonly TransferOperand[], crcs: Float64Array): Promise<Uint32Array> {
  return (await transfer(operands, EMPTY, { crcs })).crcs;
}

/**
 * The operand list of one native transfer, each operand listed once (ranges name operands by
 * index), and `op(o)`: the index of `o`, added at its first use. `first` get indices 0, 1, ….
 */
export function transferOperands(...first: TransferOperand[]): { operands: TransferOperand[]; op: (o: TransferOperand) => number } {
  const operands: TransferOperand[] = [];
  const index = new Map<TransferOperand, number>();
  const op = (o: TransferOperand): number => {
    let i = index.get(o);
    if (i === undefined) {
      i = operands.push(o) - 1;
      index.set(o, i);
    }
    return i;
  };
  for (const o of first) op(o);
  return { operands, op };
}
