// The papers' workload (libs/twin experiments/shared/paper-workload.ts) drawn by the multi-round
// generator, which is libs/testkit's and so cannot be imported by the twin: the options over the
// generator's defaults, the sessions it draws, and their statistics beside the papers'.
import { DEFAULT_WORKLOAD, fitTail, workload } from '@mnemo/testkit';
import { cycleSessions, fastswitchWorkload, paperWorkload, paperWorkloadStats as statsOf } from '@mnemo/twin';

export { PAPER_STATS } from '@mnemo/twin';
export const PAPER_WORKLOAD = paperWorkload(DEFAULT_WORKLOAD);
export const FASTSWITCH_WORKLOAD = fastswitchWorkload(DEFAULT_WORKLOAD);

/**
 * The base sessions (the papers' "1,000 samples") and a lazy list of `count` sessions cycling
 * through them, each with its own tokens (the system prompt shared), built when a user takes it.
 * `base` may be passed in: drawing the 1,000 sessions costs seconds, and every run reuses them.
 */
export function paperSessions(o = PAPER_WORKLOAD, count = o.sessions, base = workload(o)) {
  return { base, sessions: cycleSessions(base, count, o.systemTokens) };
}

const bases = new Map();
/** The base sessions of `o`, drawn once per thread and options (seconds each; every run reuses them). */
export function baseSessions(o = PAPER_WORKLOAD) {
  const key = JSON.stringify(o);
  if (!bases.has(key)) bases.set(key, workload(o));
  return bases.get(key);
}

/** The generated statistics beside the papers'. */
export const paperWorkloadStats = (base, o = PAPER_WORKLOAD) => statsOf(base, o, fitTail());
