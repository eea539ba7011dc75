import { qualityLoss, type ProfiledPattern, type QualityMetric } from './pareto.frontier.js';

export interface PlanRequest {
  /** Largest acceptable quality loss under `qualityMetric` (0.01 = 1%). */
  readonly maxQualityLoss: number;
  /**
   * The metric the floor holds on (default `top1`: 1 − top-1 agreement); `task`: the relative
   * increase of the derived model's held-out loss, for pairs an operator configured so. A point
   * without a measured task loss never meets a `task` floor.
   */
  readonly qualityMetric?: QualityMetric;
  /** Latency budget in ms from the request's arrival (its TTFT SLO); undefined: no budget, take the cheapest plan within the floor. */
  readonly latencyBudgetMs?: number;
  /**
   * Current load as queued prefill work in units of one prefill (0 = idle). A plan's
   * profiled time is stretched by (1 + load): on a busy node each layer waits its turn.
   */
  readonly load: number;
  /**
   * How long the request has already waited (ms since it arrived). A TTFT budget is spent from
   * arrival, so the wait is charged against it: a plan fits when wait + estimate ≤ budget. Left
   * out, 0: the whole budget goes to the prefill, which on a queue keeps slow plans until requests
   * are already late (docs/twin.md "DroidSpeak at scale").
   */
  readonly waitedMs?: number;
}

export interface PlanChoice {
  readonly point: ProfiledPattern;
  /** The plan's prefill latency at the load (the wait not included). */
  readonly estimatedMs: number;
  /** False when no plan within the quality floor fits what the wait left of the budget: the cheapest such plan is returned. */
  readonly withinBudget: boolean;
}

/**
 * DroidSpeak §4.4 online choice on a stored frontier (cheapest first). The quality floor
 * is hard; within it, with a budget, the most accurate plan that fits in what the request's
 * wait left of it (slack is spent on recomputation; load and waiting push towards reuse);
 * without a budget, or when nothing fits, the cheapest. Null when nothing on the frontier meets the floor (profile lacked the
 * recompute-everything pattern) — the caller then runs a full prefill.
 */
export function choosePlan(frontier: readonly ProfiledPattern[], req: PlanRequest): PlanChoice | null {
  if (!(req.maxQualityLoss >= 0 && req.maxQualityLoss <= 1))
    throw new RangeError(`maxQualityLoss must be in [0, 1], got ${req.maxQualityLoss}`);
  if (!(req.load >= 0) || !Number.isFinite(req.load)) throw new RangeError(`load must be a finite number ≥ 0, got ${req.load}`);
  if (req.latencyBudgetMs !== undefined && !(req.latencyBudgetMs > 0))
    throw new RangeError(`latencyBudgetMs must be > 0, got ${req.latencyBudgetMs}`);
  const waited = req.waitedMs ?? 0;
  if (!(waited >= 0) || !Number.isFinite(waited)) throw new RangeError(`waitedMs must be a finite number ≥ 0, got ${req.waitedMs}`);
  const metric = req.qualityMetric ?? 'top1';
  if (metric !== 'top1' && metric !== 'task') throw new RangeError(`qualityMetric must be top1 or task, got ${String(metric)}`);
  const loss = (p: ProfiledPattern): number => qualityLoss(p, metric);
  // A hair of tolerance so 0.99 agreement meets a 1% floor despite 1 − 0.99 ≠ 0.01 in floating point.
  const ok = frontier.filter((p) => loss(p) <= req.maxQualityLoss + 1e-9);
  if (ok.length === 0) return null;
  const estimate = (p: ProfiledPattern): number => p.prefillMs * (1 + req.load);
  const cheapest = ok.reduce((a, b) => (b.recomputedLayers < a.recomputedLayers ? b : a));
  if (req.latencyBudgetMs === undefined) return { point: cheapest, estimatedMs: estimate(cheapest), withinBudget: true };
  const fits = ok.filter((p) => waited + estimate(p) <= req.latencyBudgetMs!);
  if (fits.length === 0) return { point: cheapest, estimatedMs: estimate(cheapest), withinBudget: false };
  const best = fits.reduce((a, b) => (loss(b) < loss(a) || (loss(b) === loss(a) && b.meanKl < a.meanKl) ? b : a));
  return { point: best, estimatedMs: estimate(best), withinBudget: true };
}
