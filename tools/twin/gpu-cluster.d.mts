export interface GpuHardware {
  instances: number;
  [k: string]: unknown;
}
export const SYMPHONY_HARDWARE: GpuHardware;
export function scaledHardware(hw: GpuHardware, f?: { flops?: number; mem?: number; pcie?: number; network?: number }): GpuHardware;
export function hardwareLinks(hw: GpuHardware): Record<string, { dispatchMs: number; bytesPerMs: number }>;
export function gpuCluster(
  hw: GpuHardware,
  system: string,
  o: {
    users: number;
    rampMs: number;
    seed: number;
    tenant: string;
    variant?: { missed?: number; spurious?: number };
    untilMs?: number;
    conductorThreshold?: number;
  },
): object;
