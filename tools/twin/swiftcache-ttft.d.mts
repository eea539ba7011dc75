export interface TtftRun {
  ttft_p99_ms: number;
  ttft_p50_ms: number;
  utilization: number;
  history_in: Record<string, number>;
  lent_gb?: number;
  loaded_gb: number;
  stored_gb: number;
  span_s: number;
  per_worker_bytes?: number[];
}
export interface TtftRate {
  rate_per_s: number;
  offload: TtftRun;
  swiftcache: TtftRun;
  swiftcache_live_only: TtftRun;
  swiftcache_lend_idle: TtftRun;
  p99_ratio: number;
  p99_ratio_live_only: number;
  p99_ratio_lend_idle: number;
}
export interface TtftWork {
  initial: { session: number; history: number }[];
  requests: {
    at: number;
    session: number;
    history: number;
    input: number;
    reply: number;
    measured: boolean;
    warm: { session: number; history: number; ended: number } | null;
  }[];
}
export function sessionsInRotation(s?: unknown): number;
export function ttftWorkload(ratePerS: number, s?: unknown, slots?: number): TtftWork;
export function runTtft(
  system: 'offload' | 'swiftcache' | 'swiftcache-live-only' | 'swiftcache-lend-idle',
  work: TtftWork,
  s?: unknown,
): TtftRun;
export function ttftExperiment(s?: unknown, progress?: (label: string) => void): { sessions_in_rotation: number; rates: TtftRate[] };
