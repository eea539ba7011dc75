// The headline keys of each benchmark and the target each is held to: the one place targets
// live. `docs/results.md` shows these first, with the value from the results file and whether
// it meets the target; every other figure the file holds is listed after them.
//
// `path` is a dotted path into bench/results/<bench>.json. `target` is { op, value } with op one
// of '>=', '<=', '>', '<', or '=' (a flag that must hold a value: `value` is then a boolean). `label` marks a figure that is not a
// like-for-like headline (a constructed case, a separate method): it is shown, never counted as meeting a target.
//
// A twin headline that reproduces a paper's ratio has a two-sided target, { op: 'band', value: [lo, hi],
// paper: [plo, phi], cause? }: the paper's reported range widened ×/÷ 1.5 (`paperBand`). A figure
// outside it on either side is `disagrees_with_paper`, never met; `cause` is the traced reason shown
// when the figure is outside (an experiment may give a fresher one in its file's `disagreement_causes`).

/** The band a twin ratio is held to: the paper's range [lo, hi] (a single figure: lo = hi) widened ×/÷ 1.5. */
import { LIVE_TARGETS } from './targets.live.js';
import { PAPER_TARGETS } from './targets.papers.js';
import { TRACE_TARGETS } from './targets.trace.js';
import { TWIN_TARGETS } from './targets.twin.js';
import type { BenchmarkTargets, HeadlineTarget } from './targets.types.js';

export { paperBand, type BenchmarkTargets, type HeadlineKey, type HeadlineTarget } from './targets.types.js';

/** Every benchmark's headline keys, in the order docs/results.md shows them. */
export const BENCHMARKS: Record<string, BenchmarkTargets> = { ...LIVE_TARGETS, ...TWIN_TARGETS, ...PAPER_TARGETS, ...TRACE_TARGETS };

/** The target registered for a headline key (the robustness rows hold their ±20% cases to the same one). */
export function targetOf(bench: string, path: string): HeadlineTarget {
  const t = BENCHMARKS[bench]?.keys.find((k) => k.path === path)?.target;
  if (!t) throw new Error(`no target registered for ${bench} ${path}`);
  return t;
}
