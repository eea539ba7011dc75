import type { ReusePattern } from '@mnemo/kv-core';
export interface ProfiledPoint {
  key: string;
  pattern: ReusePattern;
  quality: number;
  /** Task loss on the profiling split, where the profile measured it. */
  taskLoss?: number;
  testLoss: number | null;
}
export interface ProfiledPair {
  name: string;
  base: string;
  kind: 'trained' | 'constructed';
  /** The pair's kind in the DroidSpeak paper's terms (trained pairs): base_full_ft, full_ft_pair, base_lora, lora_pair. */
  pairKind?: string;
  layers: number;
  points: ProfiledPoint[];
}
export const PROFILE_FILE: string;
export function readProfiles(path?: string): unknown;
export function profiledPairs(results: unknown): ProfiledPair[];
export function targetFrontier(
  pair: ProfiledPair,
  compute: unknown,
  link: unknown,
  context: number,
  question: number,
): Array<{
  pattern: ReusePattern;
  quality: number;
  meanKl: number;
  recomputedLayers: number;
  eCacheBytesPerToken: number;
  prefillMs: number;
  source: ProfiledPoint;
}>;
