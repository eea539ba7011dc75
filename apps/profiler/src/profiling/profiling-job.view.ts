import type { ProfilingJobEntity } from './profiling-job.entity.js';

/** What `GET /v1/profiler/jobs/{id}` returns. */
export interface ProfilingJobView {
  readonly id: string;
  readonly base: string;
  readonly derived: string;
  readonly status: ProfilingJobEntity['status'];
  readonly prompts: number;
  readonly continuationTokens: number;
  readonly totalPatterns: number;
  readonly donePatterns: number;
  readonly percent: number;
  /** Seconds left at this run's rate; null before the first pattern of a run, or once finished. */
  readonly etaSeconds: number | null;
  readonly runs: number;
  readonly error: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

/** Progress from the stored counters; the ETA extrapolates the current run only (a resumed run restarts the clock). */
export function toJobView(j: ProfilingJobEntity, nowMs: number): ProfilingJobView {
  const doneThisRun = j.donePatterns - j.doneAtRunStart;
  let eta: number | null = null;
  if (j.status === 'running' && j.runStartedAt && doneThisRun > 0) {
    const perPattern = (nowMs - j.runStartedAt.getTime()) / 1000 / doneThisRun;
    eta = Math.max(0, Math.round(perPattern * (j.totalPatterns - j.donePatterns) * 10) / 10);
  }
  return {
    id: j.id,
    base: j.baseModelId,
    derived: j.derivedModelId,
    status: j.status,
    prompts: j.prompts.length,
    continuationTokens: j.continuationTokens,
    totalPatterns: j.totalPatterns,
    donePatterns: j.donePatterns,
    percent: Math.round((1000 * j.donePatterns) / j.totalPatterns) / 10,
    etaSeconds: j.status === 'done' ? 0 : eta,
    runs: j.runs,
    error: j.error,
    createdAt: j.createdAt.toISOString(),
    finishedAt: j.finishedAt?.toISOString() ?? null,
  };
}
