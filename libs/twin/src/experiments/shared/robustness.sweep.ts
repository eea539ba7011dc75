import type { Progress } from '../../trace/trace.experiment.js';

/** What a robustness sweep scales: each parameter by each factor. */
export interface RobustnessSweep<P extends string = string> {
  readonly parameters: readonly P[];
  readonly factors: readonly number[];
}

/** One case of a sweep: the tables as they are (`none` × 1) or one parameter scaled. */
export interface RobustnessCase<P extends string = string> {
  readonly parameter: P | 'none';
  readonly factor: number;
}

/**
 * The rows of a robustness sweep: the tables as they are, then each of `r.parameters` scaled by
 * each of `r.factors`. `row(c, tick)` runs two systems on case `c`, calling `tick(system)` before
 * each run, so progress counts every run; messages start with `label`.
 */
export function robustnessRows<R, P extends string>(
  r: RobustnessSweep<P>,
  progress: Progress,
  label: string,
  row: (c: RobustnessCase<P>, tick: (system: string) => void) => R,
): R[] {
  const cases: RobustnessCase<P>[] = [
    { parameter: 'none', factor: 1 },
    ...r.parameters.flatMap((parameter) => r.factors.map((factor) => ({ parameter, factor }))),
  ];
  const n = cases.length * 2;
  let i = 0;
  const rows = cases.map((c) => row(c, (system) => progress(i++, n, `${label}${system} · ${c.parameter} × ${c.factor}`)));
  progress(n, n, `${label}done`);
  return rows;
}
