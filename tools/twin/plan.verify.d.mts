import type { Evaluation } from './plan.search.mjs';
export function verifyWhole(
  run: (instances: number) => Evaluation,
  o: { start: number; max: number; floorGain: number; sloTtftMs?: number },
): { instances: number | null; reason: string | null; runs: ({ instances: number; meets: boolean } & Record<string, unknown>)[] };
export function ttftFloorMs(sessions: unknown[], hw: unknown, o?: { p?: number; maxContext?: number }): number;
