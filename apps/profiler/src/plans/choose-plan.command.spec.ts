import { ErrorCode } from '@mnemo/kv-core';
import { ChoosePlanCommand, DEFAULT_MAX_QUALITY_LOSS } from './choose-plan.command.js';

const ok = { base: 'b', derived: 'd', maxQualityLoss: 0, latencyBudgetMs: 0, load: 0 };

describe(ChoosePlanCommand.name, () => {
  it('reads proto zeros as the default floor and no budget', () => {
    expect(ChoosePlanCommand.from(ok).policy).toEqual({ maxQualityLoss: DEFAULT_MAX_QUALITY_LOSS, latencyBudgetMs: undefined, load: 0 });
    expect(ChoosePlanCommand.from({ ...ok, maxQualityLoss: 0.05, latencyBudgetMs: 30, load: 2 }).policy).toEqual({
      maxQualityLoss: 0.05,
      latencyBudgetMs: 30,
      load: 2,
    });
  });

  it.each<[string, Partial<typeof ok>]>([
    ['no base', { base: '' }],
    ['no derived', { derived: '' }],
    ['loss above 1', { maxQualityLoss: 1.5 }],
    ['negative loss', { maxQualityLoss: -0.1 }],
    ['NaN budget', { latencyBudgetMs: NaN }],
    ['negative load', { load: -1 }],
    ['infinite load', { load: Infinity }],
  ])('%s → invalid_request', (_name, patch) => {
    expect(() => ChoosePlanCommand.from({ ...ok, ...patch })).toThrow(expect.objectContaining({ code: ErrorCode.InvalidRequest }));
  });
});
