import type { PolicyPlan } from './plan.d.mts';
export interface Evaluation {
  meets: boolean;
  p99: number | null;
  tpotOk: boolean;
  summary: Record<string, unknown>;
  reused?: boolean;
}
export type Candidate = { instances: number; hostGb: number; ssdTb: number };
export function fewestInstances(
  check: (n: number) => Evaluation,
  o: { start: number; max: number; floorGain: number },
): { instances: number | null; reason: string | null };
export function planPolicy(o: {
  gpu: string;
  evaluate: (c: Candidate) => Evaluation;
  grid: { hostGb: number; ssdTb: number }[];
  base: { hostGb: number; ssdTb: number };
  start: number;
  max: number;
  floorGain: number;
}): PolicyPlan;
