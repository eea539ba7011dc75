/**
 * @mnemo/native-cuda — the native mechanism library: aligned/pinned host buffers, batched
 * copies on a native thread pool, host-memory and SSD pool devices with batched transfers
 * and CRC32C (the KV store's tiers), CUDA discovery, and the compute kernels (./kernels).
 * Everything here validates its arguments and throws TypeError/RangeError (with Node-style
 * codes) or NativeError (with NativeErrorCode codes).
 */
export { EXPECTED_NATIVE_ABI } from './addon.loader.js';
export type { CudaDevice, CudaInfo, NativeAddon, NativeStats, NativeVersion, SsdPoolStats } from './addon.loader.js';
export { batchCopy, packRanges, RANGE_FIELDS } from './batch.copy.js';
export type { CopyRange } from './batch.copy.js';
export {
  allocHostBuffer,
  DEFAULT_HOST_ALIGNMENT,
  freeHostBuffer,
  hostMemoryKind,
  MAX_HOST_ALIGNMENT,
  MAX_HOST_BUFFER_BYTES,
} from './host-buffer.allocator.js';
export { HostPoolDevice, MAX_HOST_POOL_BYTES, numaNodes, openHostPool } from './host-pool.device.js';
export type { HostPoolOptions } from './host-pool.device.js';
export { openSsdPool, SsdPoolDevice } from './ssd-pool.device.js';
export type { IoBackend, SsdPoolOptions } from './ssd-pool.device.js';
export {
  CRC_RANGE_FIELDS,
  crc32cRanges,
  packCrcRanges,
  packTransferRanges,
  transfer,
  transferOperands,
  TRANSFER_RANGE_FIELDS,
} from './pool.transfer.js';
export type { CrcRange, TransferOperand, TransferOptions, TransferRange, TransferResult } from './pool.transfer.js';
export { kvChunkRanges, kvSegmentBytes } from './kv-chunk.ranges.js';
export type { KvChunkRangesArgs, KvSegmentPlace } from './kv-chunk.ranges.js';
export { crc32c, crc32cImplementations, selectCrc32c } from './crc32c.js';
export type { Crc32cImplementation } from './crc32c.js';
export { dropPageCache, ioInfo, probeDirectIo, probeMemcpy } from './io.probes.js';
export type { DirectIoProbeOptions, DirectIoProbeResult, IoInfo, MemcpyProbeResult, MemcpyProbeShape } from './io.probes.js';
export type { HostBufferOptions, HostMemoryKind } from './host-buffer.allocator.js';
export { NativeError, NativeErrorCode, ValidationCode } from './native.error.js';
export { closeNative, cudaInfo, externalMemory, nativeStats, nativeVersion } from './native.info.js';
export * from './kernels/index.js';
