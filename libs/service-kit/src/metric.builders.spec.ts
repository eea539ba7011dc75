import { Registry } from 'prom-client';
import { metricBuilders } from './metric.builders.js';

async function scrape(registry: Registry, name: string) {
  const metric = await registry.getSingleMetric(name)!.get();
  return metric.values.map((v) => [v.labels, v.value]);
}

describe(metricBuilders.name, () => {
  it('a tally mirrors its source at every scrape instead of adding it up', async () => {
    const registry = new Registry();
    let total = 3;
    metricBuilders(registry).tally('t_total', 'h', () => total);
    expect(await scrape(registry, 't_total')).toEqual([[{}, 3]]);
    total = 5;
    expect(await scrape(registry, 't_total')).toEqual([[{}, 5]]);
  });

  it.each([
    ['sampledBy', 'g'],
    ['tallyBy', 'c_total'],
  ] as const)('%s keeps exactly the rows its source gives now', async (kind, name) => {
    const registry = new Registry();
    let rows: Array<readonly [{ model: string }, number]> = [
      [{ model: 'a' }, 1],
      [{ model: 'b' }, 2],
    ];
    metricBuilders(registry)[kind](name, 'h', ['model'], () => rows);
    expect(await scrape(registry, name)).toEqual([
      [{ model: 'a' }, 1],
      [{ model: 'b' }, 2],
    ]);
    rows = [[{ model: 'b' }, 4]];
    expect(await scrape(registry, name)).toEqual([[{ model: 'b' }, 4]]);
  });

  it('a sampled gauge reads its source at scrape time', async () => {
    const registry = new Registry();
    let v = 7;
    metricBuilders(registry).sampled('s', 'h', () => v);
    v = 8;
    expect(await scrape(registry, 's')).toEqual([[{}, 8]]);
  });
});
