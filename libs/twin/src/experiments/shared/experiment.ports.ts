import type { TwinSession } from '../../workload/session.workload.js';

/**
 * Whether the target registered for a results file's key holds for `value`: libs/testkit's
 * `holds(value, targetOf(results, path))`. The targets are testkit's, which the twin may not
 * import, so the command line (tools/twin) passes this in.
 */
export type TargetCheck = (path: string, value: number) => boolean;

/**
 * `sessions` base sessions drawn with `seed` by the multi-round generator (libs/testkit
 * workloads) with an experiment's options: a port for the same reason as {@link TargetCheck}.
 */
export type SessionDraw = (sessions: number, seed: number) => readonly TwinSession[];
