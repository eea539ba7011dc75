import { type CudaInfo, nativeAddon, type NativeStats, type NativeVersion } from './addon.loader.js';

/** Version of the native library, its ABI and whether CUDA was compiled in. */
export function nativeVersion(): NativeVersion {
  return nativeAddon().version();
}

/**
 * What CUDA sees: compiled in or not, device count and, when there is no device, the
 * runtime's reason (e.g. `cudaErrorInsufficientDriver` on a host without a GPU driver).
 * Queried once per process environment.
 */
export function cudaInfo(): CudaInfo {
  return nativeAddon().cudaInfo();
}

export function nativeStats(): NativeStats {
  return nativeAddon().stats();
}

/**
 * Joins the native threads and refuses further work with NativeError `closed`. Batches in
 * flight still settle. Also done automatically when the Node environment exits (an env
 * clean-up hook), so calling it is only needed to release the threads early.
 */
export function closeNative(): void {
  nativeAddon().close();
}

/**
 * V8's running total of external memory: what host pools report (AdjustExternalMemory) and
 * external ArrayBuffers add, and what V8's GC heuristics read. For tests and metrics.
 */
export function externalMemory(): number {
  return nativeAddon().externalMemory();
}
