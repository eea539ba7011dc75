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

/** CRC32C implementations: carry-less folding (AVX-512), `crc32`-instruction streams, tables. */
export type Crc32cImplementation = 'vpclmulqdq' | 'sse4.2' | 'armv8-crc' | 'software';

/** The implementations this CPU can run, fastest first (the first is the one in use at load). */
export function crc32cImplementations(): Crc32cImplementation[] {
  return nativeAddon().crc32cImplementations() as Crc32cImplementation[];
}

/**
 * Switches every CRC32C the addon computes (transfers included) to `name`, process-wide.
 * For same-process A/B measurements and tests only: all implementations give the same
 * answers, so a switch never changes a result, only its speed.
 * @throws TypeError for a non-string; NativeError `invalid_argument` for a name this CPU cannot run.
 */
export function selectCrc32c(name: Crc32cImplementation): void {
  if (typeof name !== 'string') throw typeError(`name must be a string, got ${typeof name}`);
  nativeAddon().selectCrc32c(name);
}
