import { syntheticBase } from '../engine/engine.factory.js';
import { parseDroidSpeakSettings, type DroidSpeakEnv } from './droidspeak.settings.js';

describe(parseDroidSpeakSettings.name, () => {
  it.each<[string, DroidSpeakEnv, readonly string[], Array<[string, string]>]>([
    ['catalog pairs served together', {}, ['mnemo-small', 'mnemo-small-ds24'], [['mnemo-small-ds24', 'mnemo-small']]],
    ['a derived model without its base: no pair', {}, ['mnemo-small-ds24'], []],
    [
      'explicit pairs of model directories',
      { NODE_DROIDSPEAK_BASES: ['models/ft=models/base'] },
      ['models/base', 'models/ft'],
      [['models/ft', 'models/base']],
    ],
    ['explicit pairs not served: ignored', { NODE_DROIDSPEAK_BASES: ['a=b'] }, ['mnemo-tiny'], []],
  ])('%s', (_, env, served, pairs) => {
    expect([...parseDroidSpeakSettings(env, served, syntheticBase).settings!.bases]).toEqual(pairs);
  });

  it('defaults: on, a 1% floor, no latency budget', () => {
    const { settings } = parseDroidSpeakSettings({}, [], syntheticBase);
    expect(settings).toMatchObject({ enabled: true, maxQualityLoss: 0.01, planTimeoutMs: 2000 });
    expect(settings!.latencyBudgetMs).toBeUndefined();
    expect(
      parseDroidSpeakSettings(
        { NODE_DROIDSPEAK: 'off', NODE_DROIDSPEAK_MAX_LOSS_BP: 50, NODE_DROIDSPEAK_LATENCY_BUDGET_MS: 40 },
        [],
        syntheticBase,
      ).settings,
    ).toMatchObject({
      enabled: false,
      maxQualityLoss: 0.005,
      latencyBudgetMs: 40,
    });
  });

  it('quality metric per pair: top1 unless set', () => {
    const { settings } = parseDroidSpeakSettings(
      { NODE_DROIDSPEAK_QUALITY_METRICS: ['models/lora=task', 'models/ft=top1'] },
      [],
      syntheticBase,
    );
    expect([...settings!.qualityMetrics]).toEqual([
      ['models/lora', 'task'],
      ['models/ft', 'top1'],
    ]);
    expect(parseDroidSpeakSettings({}, [], syntheticBase).settings!.qualityMetrics.size).toBe(0);
  });

  it.each([['a'], ['a=bleu'], ['=task'], ['a=task=top1']])('refuses the quality metric entry %j', (entry) => {
    const r = parseDroidSpeakSettings({ NODE_DROIDSPEAK_QUALITY_METRICS: [entry] }, ['a'], syntheticBase);
    expect(r.settings).toBeUndefined();
    expect(r.problems).toEqual([expect.stringContaining('NODE_DROIDSPEAK_QUALITY_METRICS')]);
  });

  it.each([['nobase'], ['a=b=c'], ['=b'], ['a=a']])('refuses the pair %j', (entry) => {
    const r = parseDroidSpeakSettings({ NODE_DROIDSPEAK_BASES: [entry] }, ['a', 'b'], syntheticBase);
    expect(r.settings).toBeUndefined();
    expect(r.problems).toHaveLength(1);
  });
});
