export const REPORT_PATH: string;
export const REPORT_COMMAND: string;
export interface RunStamp {
  date: string;
  command?: string;
  machine?: { cpus: number; cpu: string; memory_gib: number; node: string };
  load_average?: { start: number[]; end: number[] };
  note?: string;
}
export interface Target {
  op: string;
  value: number | boolean | [number, number];
  paper?: [number, number];
  cause?: string;
}
export const DISAGREES: 'disagrees_with_paper';
export interface HeadlinesInBand {
  in_band: number;
  total: number;
  disagrees: Array<{ key: string; value: unknown; band: [number, number]; cause: string }>;
}
export function showTarget(target?: Target): string;
export function holds(value: unknown, target: Target): boolean;
export function headlinesInBand(name: string, json: Record<string, unknown>): HeadlinesInBand;
export function runStamp(o: { args: string[]; loadStart: number[]; date?: Date }): RunStamp;
export function at(obj: unknown, path: string): unknown;
export function verdict(value: unknown, target?: Target, label?: string): string;
export function figures(json: Record<string, unknown>, maxDepth?: number): Array<[string, unknown]>;
export function renderReport(results: Record<string, { json: Record<string, unknown>; hasPlot: boolean }>): string;
export function readResults(root: string): Record<string, { json: Record<string, unknown>; hasPlot: boolean }>;
export function writeReport(root: string): string;
