export * from './backend.interface.js';
export { CpuKernelBackend } from './cpu-backend.js';
export { CudaKernelBackend, DeviceTensor } from './cuda-backend.js';
export type { CudaBackendOptions, DeviceDtype } from './cuda-backend.js';
export { createKernelBackend } from './kernel-backend.factory.js';
export { KERNEL_CONTRACT, kernelCall } from './kernel.contract.js';
export type { KernelArgs, KernelCall, KernelOp, ListOp } from './kernel.contract.js';
