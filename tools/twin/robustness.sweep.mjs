/**
 * The rows of a robustness sweep: the tables as they are, then each of `r.parameters` scaled by
 * each of `r.factors`. `row(c, tick)` runs two systems on case `c`, calling `tick(system)` before
 * each run, so progress counts every run; messages start with `label`.
 */
export function robustnessRows(r, progress, label, row) {
  const cases = [
    { parameter: 'none', factor: 1 },
    ...r.parameters.flatMap((parameter) => r.factors.map((factor) => ({ parameter, factor }))),
  ];
  const n = cases.length * 2;
  let i = 0;
  const rows = cases.map((c) => row(c, (system) => progress(i++, n, `${label}${system} · ${c.parameter} × ${c.factor}`)));
  progress(n, n, `${label}done`);
  return rows;
}
