export interface Tail {
  tokens: number;
  share: number;
}
export const SHAREGPT_TAIL: Tail[];
export function normalQuantile(p: number): number;
export function fitTail(tail?: Tail[]): { median: number; sigma: number };
export function text(n: number, salt: number): number[];
export interface WorkloadOptions {
  seed: number;
  sessions: number;
  systemTokens: number;
  lengthScale: number;
  maxSessionTokens: number;
  singleTurnShare: number;
  maxTurns: number;
  user: { median: number; sigma: number; min: number; max: number };
  reply: { median: number; sigma: number; min: number; max: number };
  readTokensPerS: number;
  typeTokensPerS: number;
  thinkCompression: number;
  dilation: number;
}
export const DEFAULT_WORKLOAD: WorkloadOptions;
export interface Turn {
  user: number[];
  typed: number;
  pasted: number;
  reply: number;
  readMs: number;
  typeMs: number;
  r: number;
}
export interface Session {
  id: string;
  system: number[];
  doc: number[];
  turns: Turn[];
}
export function workload(o?: WorkloadOptions): Session[];
export function sessionTokens(s: Session): number;
export function workloadStats(
  sessions: Session[],
  o?: WorkloadOptions,
): {
  sessions: number;
  mean_turns: number;
  multi_turn_share: number;
  typed_user_turn_p90_tokens: number | null;
  session_tokens: { p50: number | null; p90: number | null; p99: number | null; max: number; mean: number };
  tail: Array<{ sharegpt_tokens: number; scaled_tokens: number; sharegpt_share_over: number; share_over: number }>;
  fit: { median_tokens: number; sigma: number; scaled_median_tokens: number };
};
