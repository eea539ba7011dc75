import { ErrorCode, MnemoError, QUALITY_METRICS, type PlanRequest as PolicyRequest, type QualityMetric } from '@mnemo/kv-core';
import type { PlanRequest } from '@mnemo/proto';

/** Quality floor when the request leaves it 0: DroidSpeak's "negligible loss". */
export const DEFAULT_MAX_QUALITY_LOSS = 0.01;

/** A validated PlanRequest (proto3 zeros read as "default"/"none"). */
export class ChoosePlanCommand {
  private constructor(
    readonly base: string,
    readonly derived: string,
    readonly policy: PolicyRequest,
  ) {}

  static from(
    req: Pick<PlanRequest, 'base' | 'derived' | 'maxQualityLoss' | 'latencyBudgetMs' | 'load'> & { qualityMetric?: string },
  ): ChoosePlanCommand {
    const problems: string[] = [];
    if (req.base === '') problems.push('base is required');
    if (req.derived === '') problems.push('derived is required');
    if (!(req.maxQualityLoss >= 0 && req.maxQualityLoss <= 1)) problems.push('max_quality_loss must be in [0, 1]');
    if (!(req.latencyBudgetMs >= 0) || !Number.isFinite(req.latencyBudgetMs))
      problems.push('latency_budget_ms must be a finite number ≥ 0');
    if (!(req.load >= 0) || !Number.isFinite(req.load)) problems.push('load must be a finite number ≥ 0');
    const metric = req.qualityMetric || 'top1';
    if (!QUALITY_METRICS.includes(metric as QualityMetric))
      problems.push(`quality_metric must be top1 or task, got ${JSON.stringify(metric)}`);
    if (problems.length > 0) throw new MnemoError(ErrorCode.InvalidRequest, problems.join('; '), { problems });
    return new ChoosePlanCommand(req.base, req.derived, {
      maxQualityLoss: req.maxQualityLoss === 0 ? DEFAULT_MAX_QUALITY_LOSS : req.maxQualityLoss,
      latencyBudgetMs: req.latencyBudgetMs === 0 ? undefined : req.latencyBudgetMs,
      load: req.load,
      qualityMetric: metric as QualityMetric,
    });
  }
}
