/** Solves m·x = rhs by Gaussian elimination with partial pivoting; null when m is singular. */
export function solveLinear(m: readonly (readonly number[])[], rhs: readonly number[]): number[] | null {
  const n = rhs.length;
  const a = m.map((row, i) => [...row, rhs[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) return null;
    [a[c], a[p]] = [a[p]!, a[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= n; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  return a.map((row, i) => row[n]! / row[i]!);
}

/**
 * Least squares with every coefficient ≥ 0: `y ≈ X·θ` over the rows, a term whose unconstrained
 * fit goes negative dropped (held at 0) and the rest refitted until none does. A cost model's
 * terms are times, and a negative one is noise the others should absorb. Terms no row exercises
 * (a singular fit) are held at 0 too.
 */
export function nonNegativeLeastSquares(xs: readonly (readonly number[])[], ys: readonly number[]): number[] {
  const k = xs[0]?.length ?? 0;
  const active = new Array<boolean>(k).fill(true);
  for (let round = 0; round <= k; round++) {
    const idx = active.flatMap((on, i) => (on ? [i] : []));
    const theta = new Array<number>(k).fill(0);
    if (idx.length === 0) return theta;
    const m = idx.map((i) => idx.map((j) => xs.reduce((s, x) => s + x[i]! * x[j]!, 0)));
    const rhs = idx.map((i) => xs.reduce((s, x, r) => s + x[i]! * ys[r]!, 0));
    const sol = solveLinear(m, rhs);
    if (!sol) {
      // The last active term no row tells apart from the others: drop it and refit.
      const unused = idx.filter((i) => xs.every((x) => x[i] === 0));
      active[unused.length > 0 ? unused[0]! : idx[idx.length - 1]!] = false;
      continue;
    }
    idx.forEach((i, n) => (theta[i] = sol[n]!));
    const worst = idx.reduce((w, i) => (theta[i]! < (w < 0 ? 0 : theta[w]!) ? i : w), -1);
    if (worst < 0) return theta;
    active[worst] = false;
  }
  return new Array<number>(k).fill(0);
}
