import { cachedBlocksBetweenTurns, SERVING_SYSTEMS, servingSystemProblems, type ServingSystem } from './serving.systems.js';

describe('SERVING_SYSTEMS', () => {
  it.each(Object.entries(SERVING_SYSTEMS))('%s is consistent', (name, s) => {
    expect(servingSystemProblems(name, s)).toEqual([]);
  });

  it('the headline baselines are not extras; the old pure-prefix and device-resident sticky are', () => {
    const extras = Object.entries(SERVING_SYSTEMS)
      .filter(([, s]) => s.extra)
      .map(([n]) => n);
    expect(extras.sort()).toEqual(['prefix-affinity', 'sticky-device']);
  });

  it('infercept: sticky routing, KV offloaded to host between turns, no SSD', () => {
    expect(SERVING_SYSTEMS.infercept).toMatchObject({ routing: 'sticky', betweenTurns: 'offload', tiers: ['host'] });
  });
});

describe(servingSystemProblems.name, () => {
  const base: ServingSystem = {
    routing: 'sticky',
    betweenTurns: 'device-cache',
    tiers: ['host'],
    peerFetch: false,
    advisories: false,
    extra: false,
    models: '',
  };
  it.each<[string, Partial<ServingSystem>, string]>([
    ['unknown routing', { routing: 'nope' as ServingSystem['routing'] }, 'x: unknown routing policy nope'],
    ['offload without a host tier', { betweenTurns: 'offload', tiers: [] }, 'x: offloads between turns but has no host tier'],
    ['advisories without symphony routing', { advisories: true }, 'x: only symphony routing weighs reservations'],
    ['peer fetch under sticky routing', { peerFetch: true }, 'x: only symphony and conductor routing weigh peer fetches'],
    ['advisories under conductor routing', { routing: 'conductor', advisories: true }, 'x: only symphony routing weighs reservations'],
  ])('%s', (_n, over, problem) => {
    expect(servingSystemProblems('x', { ...base, ...over })).toEqual([problem]);
  });
});

describe(cachedBlocksBetweenTurns.name, () => {
  it.each<[string, number]>([
    ['infercept', 0],
    ['symphony', Infinity],
    ['sticky-device', Infinity],
  ])('%s keeps %s cached blocks', (name, n) => {
    expect(cachedBlocksBetweenTurns(SERVING_SYSTEMS[name as keyof typeof SERVING_SYSTEMS])).toBe(n);
  });
});
