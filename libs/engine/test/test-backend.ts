import { createKernelBackend, type KernelBackend } from '@mnemo/native-cuda';

/** The native fp32 CPU backend the engine's exactness tests run on. */
export function cpuBackend(): KernelBackend<Float32Array> {
  return createKernelBackend('cpu');
}
