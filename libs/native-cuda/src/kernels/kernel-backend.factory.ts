import type { KernelBackend } from './backend.interface.js';
import { CpuKernelBackend } from './cpu-backend.js';
import { type CudaBackendOptions, CudaKernelBackend, type DeviceTensor } from './cuda-backend.js';

/**
 * The kernel backend by name. 'cuda' throws a plain Error saying why when the addon was
 * built without CUDA or no device is present; callers choose 'cpu' explicitly then.
 */
export function createKernelBackend(kind: 'cpu'): KernelBackend<Float32Array>;
export function createKernelBackend(kind: 'cuda', options?: CudaBackendOptions): KernelBackend<DeviceTensor>;
export function createKernelBackend(
  kind: 'cpu' | 'cuda',
  options?: CudaBackendOptions,
): KernelBackend<Float32Array> | KernelBackend<DeviceTensor>;
export function createKernelBackend(
  kind: 'cpu' | 'cuda',
  options: CudaBackendOptions = {},
): KernelBackend<Float32Array> | KernelBackend<DeviceTensor> {
  switch (kind) {
    case 'cpu':
      return new CpuKernelBackend();
    case 'cuda':
      return new CudaKernelBackend(options);
    default:
      throw new TypeError(`unknown kernel backend ${String(kind)}: expected 'cpu' or 'cuda'`);
  }
}
