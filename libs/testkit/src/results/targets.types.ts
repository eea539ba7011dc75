export type HeadlineTarget =
  | { op: '>=' | '<=' | '>' | '<' | '='; value: number | boolean | string }
  | { op: 'band'; value: [number, number]; paper: [number, number]; cause?: string };

export interface HeadlineKey {
  path: string;
  what: string;
  target?: HeadlineTarget;
  /** A figure that is not a like-for-like headline (a constructed case, a separate method): shown, never counted as meeting a target. */
  label?: string;
}

export interface BenchmarkTargets {
  what: string;
  keys: HeadlineKey[];
}

/** The band a twin ratio is held to: the paper's range [lo, hi] (a single figure: lo = hi) widened ×/÷ 1.5. */
export function paperBand(lo: number, hi = lo, cause?: string): Extract<HeadlineTarget, { op: 'band' }> {
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { op: 'band', value: [r(lo / 1.5), r(hi * 1.5)], paper: [lo, hi], ...(cause ? { cause } : {}) };
}
