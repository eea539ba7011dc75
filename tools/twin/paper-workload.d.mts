// Kept by hand: paper-workload.mjs composes libs/testkit's workload generator with the twin's
// paper workload (which the twin cannot do itself), so it is not a re-export of @mnemo/twin.
import type { Session, WorkloadOptions } from '@mnemo/testkit';
import type { PaperWorkloadStats, TwinSession } from '@mnemo/twin';

export { PAPER_STATS } from '@mnemo/twin';
export const PAPER_WORKLOAD: WorkloadOptions;
export const FASTSWITCH_WORKLOAD: WorkloadOptions;
export function paperSessions(
  o?: WorkloadOptions,
  count?: number,
  base?: readonly Session[],
): { base: readonly Session[]; sessions: readonly TwinSession[] };
export function baseSessions(o?: WorkloadOptions): readonly Session[];
export function paperWorkloadStats(base: readonly TwinSession[], o?: WorkloadOptions): PaperWorkloadStats;
