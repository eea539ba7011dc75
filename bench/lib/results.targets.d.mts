export type HeadlineTarget =
  | { op: '>=' | '<=' | '>' | '<' | '='; value: number | boolean }
  | { op: 'band'; value: [number, number]; paper: [number, number]; cause?: string };
export interface HeadlineKey {
  path: string;
  what: string;
  target?: HeadlineTarget;
  label?: string;
}
export const BENCHMARKS: Record<string, { what: string; keys: HeadlineKey[] }>;
export function targetOf(bench: string, path: string): HeadlineTarget;
export function paperBand(lo: number, hi?: number, cause?: string): Extract<HeadlineTarget, { op: 'band' }>;
