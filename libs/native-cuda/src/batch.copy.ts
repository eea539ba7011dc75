import { nativeAddon } from './addon.loader.js';
import { packRows } from './flat.rows.js';
import { rangeError, typeError, ValidationCode, withCallerStack } from './native.error.js';

/** Numbers per range in the `ranges` array: srcBuffer, srcOffset, dstBuffer, dstOffset, length. */
export const RANGE_FIELDS = 5;

/** One copy, for callers that prefer objects; `packRanges` turns a list into the flat form. */
export interface CopyRange {
  srcBuffer: number;
  srcOffset: number;
  dstBuffer: number;
  dstOffset: number;
  length: number;
}

/** Packs ranges into the flat `[srcBuf, srcOff, dstBuf, dstOff, len] × n` layout. */
export function packRanges(ranges: readonly CopyRange[]): Float64Array {
  return packRows(ranges, RANGE_FIELDS, (r) => [r.srcBuffer, r.srcOffset, r.dstBuffer, r.dstOffset, r.length]);
}

function validate(buffers: readonly ArrayBuffer[], ranges: Float64Array): void {
  if (!Array.isArray(buffers)) throw typeError('buffers must be an array of ArrayBuffer');
  for (let i = 0; i < buffers.length; i++) {
    if (!(buffers[i] instanceof ArrayBuffer) && Object.prototype.toString.call(buffers[i]) !== '[object ArrayBuffer]') {
      throw typeError(`buffers[${i}] must be an ArrayBuffer`);
    }
  }
  if (!(ranges instanceof Float64Array) && Object.prototype.toString.call(ranges) !== '[object Float64Array]') {
    throw typeError('ranges must be a Float64Array of [srcBuffer, srcOffset, dstBuffer, dstOffset, length] × n');
  }
  if (ranges.length % RANGE_FIELDS !== 0) {
    throw rangeError(`ranges.length must be a multiple of ${RANGE_FIELDS}, got ${ranges.length}`, ValidationCode.InvalidArgValue);
  }
  const n = buffers.length;
  for (let i = 0; i < ranges.length; i += RANGE_FIELDS) {
    const src = ranges[i]!,
      srcOff = ranges[i + 1]!,
      dst = ranges[i + 2]!,
      dstOff = ranges[i + 3]!,
      len = ranges[i + 4]!;
    const which = `range ${i / RANGE_FIELDS}`;
    for (let f = 0; f < RANGE_FIELDS; f++) {
      const v = ranges[i + f]!;
      if (!Number.isSafeInteger(v) || v < 0) throw rangeError(`${which}: field ${f} must be a non-negative integer, got ${v}`);
    }
    if (src >= n) throw rangeError(`${which}: srcBuffer ${src} out of range (have ${n} buffers)`);
    if (dst >= n) throw rangeError(`${which}: dstBuffer ${dst} out of range (have ${n} buffers)`);
    if (srcOff + len > buffers[src]!.byteLength) {
      throw rangeError(`${which}: source [${srcOff}, +${len}) exceeds buffer ${src} (${buffers[src]!.byteLength} bytes)`);
    }
    if (dstOff + len > buffers[dst]!.byteLength) {
      throw rangeError(`${which}: destination [${dstOff}, +${len}) exceeds buffer ${dst} (${buffers[dst]!.byteLength} bytes)`);
    }
  }
}

/**
 * Copies many byte ranges in one native call, split across the addon's own thread pool
 * (not libuv's). `ranges` holds `[srcBuffer, srcOffset, dstBuffer, dstOffset, length]` per
 * copy; buffer fields index `buffers`. Resolves when every byte is copied.
 *
 * Ranges run concurrently, so a batch whose ranges write the same byte twice, or write
 * bytes another range reads (aliasing buffers included), is refused as a whole with
 * NativeError `range_conflict` before anything is copied. Overlapping reads are fine.
 *
 * Keep the buffers attached (do not transfer them) until the Promise settles.
 * @throws (rejects) TypeError / RangeError for malformed arguments; NativeError
 *   `range_conflict`, `closed`.
 */
export function batchCopy(buffers: readonly ArrayBuffer[], ranges: Float64Array): Promise<void> {
  return withCallerStack(async () => {
    validate(buffers, ranges);
    await nativeAddon().batchCopy(buffers, ranges);
  });
}
