import { nativeAddon } from './addon.loader.js';
import { rangeError, typeError } from './native.error.js';

/**
 * CRC32C (Castagnoli) of `data`, extending `seed` (the CRC of the bytes before; 0 to start).
 * Synchronous, on the calling thread: for small inputs; large or many ranges go through
 * `crc32cRanges` / the `crcs` option of `transfer`. Known answer: crc32c of the ASCII bytes
 * "123456789" is 0xE3069283.
 */
export function crc32c(data: ArrayBuffer | ArrayBufferView, seed = 0): number {
  const isBuffer = Object.prototype.toString.call(data) === '[object ArrayBuffer]';
  if (!isBuffer && !ArrayBuffer.isView(data)) throw typeError('data must be an ArrayBuffer or an ArrayBufferView');
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw rangeError(`seed must be a uint32, got ${seed}`);
  return nativeAddon().crc32c(data, seed);
}
