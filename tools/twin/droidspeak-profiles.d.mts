import type { ReusePattern } from '@mnemo/kv-core';
export interface ProfiledPoint {
  key: string;
  pattern: ReusePattern;
  quality: number;
  testLoss: number | null;
}
export interface ProfiledPair {
  name: string;
  base: string;
  kind: 'trained' | 'constructed';
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
