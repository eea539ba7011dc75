export interface RestartPolicy {
  baseMs: number;
  maxMs: number;
  maxRestarts: number;
  windowMs: number;
}
export const DEFAULT_RESTART_POLICY: RestartPolicy;
export function restartDelay(restarts: readonly number[], now: number, policy?: RestartPolicy): number | null;
