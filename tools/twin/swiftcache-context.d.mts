import type { ElasticCacheCoordinator } from '@mnemo/kv-core';
export interface MaxContextPoint {
  gb: number;
  workers: string[];
  region_blocks: Record<string, number>;
  lent_master_blocks: Record<string, number>;
  vllm: { no_chunking: number; chunked_8k: number; chunked_32k: number };
  swiftcache: { tokens: number; regular_blocks: number; lent_blocks: number; window: number };
  eq5: { tokens: number; n_lsc: number; n_rc: number; k_master: number };
  vs_chunked8k: number;
  eq5_vs_chunked8k: number;
  vs_chunked32k: number;
  vs_no_chunking: number;
}
export function elasticLoan(
  memBytes: number,
  workers: string[],
  masterTokens: number,
  workerTokens: number,
  s?: unknown,
  mode?: 'stream' | 'cache',
): {
  regions: Record<string, number>;
  lent: Record<string, number>;
  coordinator: ElasticCacheCoordinator;
  members: { id: string; model: string }[];
};
export function maxContextAt(point: { gb: number; workers: string[] }, s?: unknown): MaxContextPoint;
export function maxContextExperiment(s?: unknown, progress?: (label: string) => void): MaxContextPoint[];
