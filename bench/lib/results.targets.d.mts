export interface HeadlineKey {
  path: string;
  what: string;
  target?: { op: '>=' | '<=' | '>' | '<' | '='; value: number | boolean };
  label?: string;
}
export const BENCHMARKS: Record<string, { what: string; keys: HeadlineKey[] }>;
