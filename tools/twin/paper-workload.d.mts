export const PAPER_WORKLOAD: Record<string, unknown> & { sessions: number; thinkCompression: number };
export const PAPER_STATS: Record<string, unknown>;
export function baseSessions(o?: object): readonly object[];
export function paperSessions(
  o?: object,
  count?: number,
  base?: readonly object[],
): { base: readonly object[]; sessions: readonly object[] };
export interface PaperWorkloadStats {
  session_tail: Array<{ tokens: number; paper_share_over: number; generated_share_over: number }>;
  mean_reply_tokens: { generated: number; paper: number };
  mean_typing_lead_s: { generated: number; paper: number };
  multi_turn_share: { generated: number; papers: number[] };
  [k: string]: unknown;
}
export function paperWorkloadStats(base: readonly object[], o?: object): PaperWorkloadStats;
