export interface PromqlToken {
  readonly kind: 'name' | 'number' | 'string' | 'variable' | 'punct' | 'op';
  readonly text: string;
}
export function tokenize(expr: string): PromqlToken[];
export function metricNames(expr: string): string[];
export function familyOf(series: string, types: ReadonlyMap<string, string>): string;
export function parseExposition(text: string): { types: Map<string, string>; sampled: Set<string> };
