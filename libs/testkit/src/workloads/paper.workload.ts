// The papers' workload (libs/twin experiments/shared/paper-workload.ts) drawn by this library's
// multi-round generator. The twin may not import testkit, so it states the options over the
// generator's defaults and what is done with the sessions; this module composes the two, for the
// twin's command line and its specs.
import {
  cycleSessions,
  fastswitchWorkload,
  paperWorkload,
  paperWorkloadStats as statsOf,
  type PaperWorkloadStats,
  type TwinSession,
} from '@mnemo/twin';
import { DEFAULT_WORKLOAD, fitTail, workload, type Session, type WorkloadOptions } from './multiround.workload.js';

export { PAPER_STATS } from '@mnemo/twin';
export const PAPER_WORKLOAD: WorkloadOptions = paperWorkload(DEFAULT_WORKLOAD);
export const FASTSWITCH_WORKLOAD: WorkloadOptions = fastswitchWorkload(DEFAULT_WORKLOAD);

/**
 * The base sessions (the papers' "1,000 samples") and a lazy list of `count` sessions cycling
 * through them, each with its own tokens (the system prompt shared), built when a user takes it.
 * `base` may be passed in: drawing the 1,000 sessions costs seconds, and every run reuses them.
 */
export function paperSessions(
  o: WorkloadOptions = PAPER_WORKLOAD,
  count: number = o.sessions,
  base: readonly Session[] = workload(o),
): { base: readonly Session[]; sessions: readonly TwinSession[] } {
  return { base, sessions: cycleSessions(base, count, o.systemTokens) };
}

const bases = new Map<string, readonly Session[]>();
/** The base sessions of `o`, drawn once per thread and options (seconds each; every run reuses them). */
export function baseSessions(o: WorkloadOptions = PAPER_WORKLOAD): readonly Session[] {
  const key = JSON.stringify(o);
  let drawn = bases.get(key);
  if (!drawn) bases.set(key, (drawn = workload(o)));
  return drawn;
}

/** The generated statistics beside the papers'. */
export const paperWorkloadStats = (base: readonly TwinSession[], o: WorkloadOptions = PAPER_WORKLOAD): PaperWorkloadStats =>
  statsOf(base, o, fitTail());
