import { nativeAddon } from './addon.loader.js';
import { rangeError, typeError, ValidationCode } from './native.error.js';

/** Default alignment: one page, what O_DIRECT I/O and DMA engines want. */
export const DEFAULT_HOST_ALIGNMENT = 4096;
/** The largest accepted alignment (1 GiB). */
export const MAX_HOST_ALIGNMENT = 2 ** 30;
/** The largest single buffer (V8's ArrayBuffer limit on 64-bit hosts is 2^53 - 1; keep sane). */
export const MAX_HOST_BUFFER_BYTES = 2 ** 40;

export interface HostBufferOptions {
  /** Power of two in [8, 2^30]; default 4096. Pinned memory allows at most 4096. */
  alignment?: number;
}

export type HostMemoryKind = 'pinned' | 'pageable';

/**
 * Allocates `bytes` of zero-filled host memory aligned to `alignment`, returned as an
 * ArrayBuffer that owns it: the memory is freed by `freeHostBuffer` or, failing that, when
 * JS collects the buffer. V8 counts it as external memory either way.
 * Pinned (cudaHostAlloc) when a CUDA device is present, else posix_memalign — see
 * `hostMemoryKind()`.
 * @throws TypeError / RangeError for bad arguments; NativeError `out_of_memory`,
 *   `cuda_error`, `closed`.
 */
export function allocHostBuffer(bytes: number, options: HostBufferOptions = {}): ArrayBuffer {
  if (typeof bytes !== 'number') throw typeError(`bytes must be a number, got ${typeof bytes}`);
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_HOST_BUFFER_BYTES) {
    throw rangeError(`bytes must be an integer in [1, 2^40], got ${bytes}`);
  }
  const alignment = options.alignment ?? DEFAULT_HOST_ALIGNMENT;
  if (typeof alignment !== 'number') throw typeError(`alignment must be a number, got ${typeof alignment}`);
  if (!Number.isInteger(alignment) || alignment < 8 || alignment > MAX_HOST_ALIGNMENT || (alignment & (alignment - 1)) !== 0) {
    throw rangeError(`alignment must be a power of two in [8, 2^30], got ${alignment}`, ValidationCode.InvalidArgValue);
  }
  return nativeAddon().allocHostBuffer(bytes, alignment);
}

/**
 * Frees a buffer from `allocHostBuffer` now, instead of when JS collects it. The buffer is
 * detached first (byteLength 0; views over it read nothing), so JS can never reach the freed
 * memory; transfers already in flight keep it until they finish. V8's external-memory count
 * drops at once.
 * @throws TypeError when `buffer` is not an ArrayBuffer; NativeError `invalid_argument` when
 *   it is not a live allocHostBuffer buffer (e.g. freed already).
 */
export function freeHostBuffer(buffer: ArrayBuffer): void {
  if (Object.prototype.toString.call(buffer) !== '[object ArrayBuffer]') throw typeError('buffer must be an ArrayBuffer');
  nativeAddon().freeHostBuffer(buffer);
}

/** The kind of memory `allocHostBuffer` returns in this process. */
export function hostMemoryKind(): HostMemoryKind {
  return nativeAddon().hostMemoryKind();
}
