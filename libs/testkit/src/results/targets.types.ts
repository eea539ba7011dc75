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

// A robustness sweep reruns an experiment with each hardware figure at −20% and +20%; every
// sweep reports the same two kinds of row, so they are spelled once here.

/** The flag that the sweep's targeted keys held in every case. */
export function metInEveryCase(
  figures: string,
  subject = 'the three headline keys at their targets',
  flag = 'targets_met_in_every_case',
): HeadlineKey {
  return {
    path: `robustness.${flag}`,
    what: `${subject} with each hardware figure (${figures}) at −20% and +20%`,
    target: { op: '=', value: true },
  };
}

/** A figure's spread over the sweep: `robustness.<key>_range`, its lowest and highest. */
export function rangeOverCases(key: string, what: string): HeadlineKey {
  return { path: `robustness.${key}_range`, what: `${what}, lowest and highest over those cases` };
}

/** The label of a key measured on mnemo-medium-ds35, whose critical layers were planted: it tests a mechanism, finds nothing. */
export const plantedPair = (test: 'a profiler test' | 'a path test'): string => `constructed pair (planted critical layers): ${test}`;

// The one-sided targets, named: a key's row reads `target: atLeast(0.7)` rather than spelling
// the { op, value } pair (the same object; docs/results.md is unchanged by it).
export const atLeast = (value: number): HeadlineTarget => ({ op: '>=', value });
export const atMost = (value: number): HeadlineTarget => ({ op: '<=', value });
export const above = (value: number): HeadlineTarget => ({ op: '>', value });
export const below = (value: number): HeadlineTarget => ({ op: '<', value });
export const equals = (value: number | boolean | string): HeadlineTarget => ({ op: '=', value });
