/** Injection tokens of the profiling feature's settings (values come from the validated config). */
export const PROFILING_LIMITS = Symbol('PROFILING_LIMITS');
export const RUNNER_OPTIONS = Symbol('RUNNER_OPTIONS');

export interface RunnerOptions {
  /** How often an idle runner looks for queued or abandoned jobs. */
  readonly pollMs: number;
  /** A claim lasts this long unless renewed (after every pattern); a crashed replica's job is resumed after it. */
  readonly leaseMs: number;
}
