import type { PlanQuestion } from './plan.d.mts';
export const PLAN_POLICIES: string[];
export const PLAN_USAGE: string;
export const PLAN_GPUS: Record<string, unknown>;
export class PlanArgsError extends Error {
  problems: string[];
  code: number;
}
export function parsePlanArgs(argv: string[]): PlanQuestion;
