/**
 * A paper's published baseline figure beside the twin's run of the same configuration:
 * error = twin ÷ paper − 1. The twin's mechanisms are only credible on top of baselines that
 * reproduce what the papers measured, so every experiment reports one of these per figure.
 */
export interface BaselineCheck {
  readonly paper: number;
  readonly twin: number | null;
  /** twin ÷ paper − 1; null when the twin has no figure for it. */
  readonly error: number | null;
  /** Where the paper gives the figure (section, figure or table). */
  readonly source: string;
  /** Why the twin cannot reproduce it, where it does not (|error| > BASELINE_ERROR_TARGET or no figure). */
  readonly cause?: string;
}

/** The error a baseline figure may carry and still count as reproduced. */
export const BASELINE_ERROR_TARGET = 0.25;

const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

export function baselineCheck(paper: number, twin: number | null | undefined, source: string, cause?: string): BaselineCheck {
  if (!(paper > 0) || !Number.isFinite(paper)) throw new RangeError(`baselineCheck: the paper's figure must be > 0, got ${paper}`);
  const t = twin === undefined || twin === null || !Number.isFinite(twin) ? null : round(twin, 4);
  const error = t === null ? null : round(t / paper - 1);
  const within = error !== null && Math.abs(error) <= BASELINE_ERROR_TARGET;
  return { paper, twin: t, error, source, ...(within || !cause ? {} : { cause }) };
}

/** How many checks are within the target, and the names of those that are not. */
export function baselineSummary(checks: Readonly<Record<string, BaselineCheck>>): { within: number; total: number; outside: string[] } {
  const names = Object.keys(checks);
  const outside = names.filter((n) => {
    const e = checks[n].error;
    return e === null || Math.abs(e) > BASELINE_ERROR_TARGET;
  });
  return { within: names.length - outside.length, total: names.length, outside };
}
