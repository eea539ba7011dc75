export const PLAN_PRICES: {
  gpuHourUsd: Record<string, number>;
  dramUsdPerGb: number;
  ssdUsdPerTb: number;
  hoursAmortised: number;
  gpusPerNode: number;
  sources: Record<string, string>;
};
export function nodesFor(instances: number, p?: typeof PLAN_PRICES): number;
export function hourlyCost(c: { gpu: string; instances: number; hostGb: number; ssdTb: number }, p?: typeof PLAN_PRICES): number;
export function costModel(p?: typeof PLAN_PRICES): Record<string, unknown>;
