export * from './backend.interface.js';
export { CpuKernelBackend } from './cpu-backend.js';
export { CudaKernelBackend, DeviceTensor } from './cuda-backend.js';
export type { CudaBackendOptions, DeviceDtype } from './cuda-backend.js';
export { createKernelBackend } from './kernel-backend.factory.js';
