export const WEIGHTS_GB: Record<string, number>;
export const UTILIZATION: number;
export interface PaperSetting {
  vramGb: number;
  gpu: string;
  master: string;
  workers: string[];
}
export const PAPER_SETTINGS: PaperSetting[];
export function kvMemoryGb(vramGb: number, model: string, utilization?: number): number;
export function workerShares(setting: PaperSetting, utilization?: number): number[];
