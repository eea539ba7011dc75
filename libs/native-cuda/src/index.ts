/**
 * @mnemo/native-cuda — the native mechanism library: aligned/pinned host buffers, batched
 * copies on a native thread pool, CUDA discovery, and the compute kernels (./kernels).
 * Everything here validates its arguments and throws TypeError/RangeError (with Node-style
 * codes) or NativeError (with NativeErrorCode codes).
 */
export { EXPECTED_NATIVE_ABI } from './addon.loader.js';
export type { CudaDevice, CudaInfo, NativeAddon, NativeStats, NativeVersion } from './addon.loader.js';
export { batchCopy, packRanges, RANGE_FIELDS } from './batch.copy.js';
export type { CopyRange } from './batch.copy.js';
export { allocHostBuffer, DEFAULT_HOST_ALIGNMENT, hostMemoryKind, MAX_HOST_ALIGNMENT, MAX_HOST_BUFFER_BYTES } from './host-buffer.allocator.js';
export type { HostBufferOptions, HostMemoryKind } from './host-buffer.allocator.js';
export { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
export { closeNative, cudaInfo, nativeStats, nativeVersion } from './native.info.js';
export * from './kernels/index.js';
