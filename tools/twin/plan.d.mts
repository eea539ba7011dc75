export interface PlanQuestion {
  users: number;
  model: string;
  gpu: string;
  sloTtftMs: number;
  sloTpotMs: number | null;
  policies: string[];
  out?: string | null;
}
export interface PlanRunOptions {
  thinkCompression: number;
  rampMs: number;
  warmMs: number;
  untilMs: number;
  seed: number;
  cellInstances: number;
  minCellUsers: number;
  fullCheckMaxUsers: number;
  usersPerInstanceStart: number;
  maxInstances: number;
  floorGain: number;
  base: { hostGb: number; ssdTb: number };
  hostGbGrid: number[];
  ssdTbGrid: number[];
  defaultTpot: { overLight: number; seqs: number; contextTokens: number };
}
export interface Tried {
  instances: number;
  nodes: number;
  host_gb: number;
  ssd_tb: number;
  meets: boolean;
  ran: boolean;
  reused?: boolean;
  settled_by?: { instances: number; host_gb: number; ssd_tb: number };
  ttft_p99_ms?: number | null;
  tpot_mean_ms?: number | null;
  requests?: number;
  pool_evictions?: number;
  simulated?: { instances: number; users: number };
  cost_usd_per_hour: number;
}
export interface PolicyPlan {
  best: {
    instances: number;
    nodes: number;
    host_gb: number;
    ssd_tb: number;
    cost_usd_per_hour: number;
    ttft_p99_ms: number | null;
    tpot_mean_ms: number | null;
    requests: number;
  } | null;
  reason: string | null;
  tried: Tried[];
  /** The cells' answer, before the whole-cluster verification. */
  slice_estimate?: PolicyPlan['best'];
  ttft_floor_ms?: number | null;
  uncached_prefill_p99_ms?: number;
  verification?: {
    whole_cluster: boolean;
    meets?: boolean;
    why?: string;
    runs?: { instances: number; meets: boolean; ttft_p99_ms?: number | null; tpot_mean_ms?: number | null; requests?: number }[];
  };
}
export interface PlanResult {
  question: {
    users: number;
    model: string;
    gpu: string;
    slo: { ttft_p99_ms: number; tpot_mean_ms: number; tpot_is_default: boolean };
    policies: string[];
  };
  plans: Record<string, PolicyPlan>;
  search: { twin_runs: number; [k: string]: unknown };
  cost_model: Record<string, unknown>;
  wall_s: number;
}
export const PLAN_RUN: PlanRunOptions;
export function defaultTpotSloMs(q: { gpu: string; model: string }, o?: PlanRunOptions): number;
export function planHardware(c: { gpu: string; model: string; instances: number; hostGb: number; ssdTb: number }): {
  hostPoolBytes: number;
  ssdPoolBytes: number;
  instances: number;
  [k: string]: unknown;
};
export function capacityPlan(
  q: PlanQuestion,
  opts?: { o?: PlanRunOptions; onRun?: (r: unknown) => void; onPolicy?: (policy: string) => void; now?: () => number; workers?: number },
): Promise<PlanResult>;
export function planOnePolicy(t: { q: PlanQuestion; policy: string; o?: PlanRunOptions }, emit?: (r: unknown) => void): PolicyPlan;
export function planTable(result: PlanResult): string;
