import { ErrorCode } from '@mnemo/kv-core';
import { ChoosePlanCommand, DEFAULT_MAX_QUALITY_LOSS } from './choose-plan.command.js';

const ok: Parameters<typeof ChoosePlanCommand.from>[0] = { base: 'b', derived: 'd', maxQualityLoss: 0, latencyBudgetMs: 0, load: 0 };

describe(ChoosePlanCommand.name, () => {
  it('reads proto zeros as the default floor and no budget', () => {
    expect(ChoosePlanCommand.from(ok).policy).toEqual({
      maxQualityLoss: DEFAULT_MAX_QUALITY_LOSS,
      latencyBudgetMs: undefined,
      load: 0,
      qualityMetric: 'top1',
    });
    expect(ChoosePlanCommand.from({ ...ok, maxQualityLoss: 0.05, latencyBudgetMs: 30, load: 2 }).policy).toEqual({
      maxQualityLoss: 0.05,
      latencyBudgetMs: 30,
      load: 2,
      qualityMetric: 'top1',
    });
  });

  it.each([
    ['', 'top1'],
    ['top1', 'top1'],
    ['task', 'task'],
  ])('quality_metric %j → %s', (qualityMetric, want) => {
    expect(ChoosePlanCommand.from({ ...ok, qualityMetric }).policy.qualityMetric).toBe(want);
  });

  it.each<[string, Partial<typeof ok>]>([
    ['no base', { base: '' }],
    ['no derived', { derived: '' }],
    ['loss above 1', { maxQualityLoss: 1.5 }],
    ['negative loss', { maxQualityLoss: -0.1 }],
    ['NaN budget', { latencyBudgetMs: NaN }],
    ['negative load', { load: -1 }],
    ['infinite load', { load: Infinity }],
    ['unknown quality metric', { qualityMetric: 'bleu' }],
  ])('%s → invalid_request', (_name, patch) => {
    expect(() => ChoosePlanCommand.from({ ...ok, ...patch })).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});
