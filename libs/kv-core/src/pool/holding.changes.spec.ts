import { HoldingChangeBatch, TierHoldings, type HoldingChange } from './holding.changes.js';

const stored = (tier: HoldingChange['tier'], keys: string[], model = 'm'): HoldingChange => ({ kind: 'stored', tier, model, keys });
const removed = (tier: HoldingChange['tier'], keys: string[], model = 'm'): HoldingChange => ({ kind: 'removed', tier, model, keys });
const truncated = (tier: HoldingChange['tier'], keys: string[]): HoldingChange => ({ kind: 'truncated', tier, model: 'm', keys });

describe(HoldingChangeBatch.name, () => {
  it.each<[string, HoldingChange[], HoldingChange[]]>([
    ['nothing', [], []],
    ['a change without keys: none', [stored('mem', [])], []],
    [
      'one kind, tier and model: merged, each key once',
      [stored('mem', ['a', 'b']), stored('mem', ['b', 'c'])],
      [stored('mem', ['a', 'b', 'c'])],
    ],
    [
      'tiers apart, in the order they began',
      [stored('ssd', ['a']), stored('mem', ['b']), stored('ssd', ['c'])],
      [stored('ssd', ['a', 'c']), stored('mem', ['b'])],
    ],
    ['kinds apart', [stored('mem', ['a']), removed('mem', ['a'])], [stored('mem', ['a']), removed('mem', ['a'])]],
    ['models apart', [stored('mem', ['a'], 'x'), stored('mem', ['a'], 'y')], [stored('mem', ['a'], 'x'), stored('mem', ['a'], 'y')]],
    [
      'layer counts apart',
      [
        { ...truncated('mem', ['a']), layers: 2 },
        { ...truncated('mem', ['b']), layers: 3 },
      ],
      [
        { ...truncated('mem', ['a']), layers: 2 },
        { ...truncated('mem', ['b']), layers: 3 },
      ],
    ],
  ])('%s', (_, changes, want) => {
    const sut = new HoldingChangeBatch();
    for (const c of changes) sut.add(c);
    expect(sut.size).toBe(want.length);
    expect(sut.take()).toEqual(want);
    expect(sut.size).toBe(0);
  });
});

describe(TierHoldings.name, () => {
  it.each<[string, HoldingChange[], HoldingChange[]]>([
    ['nothing held', [], []],
    [
      'stored in two tiers: device, then host, then SSD',
      [stored('ssd', ['a']), stored('device', ['a']), stored('mem', ['a'])],
      [stored('device', ['a']), stored('mem', ['a']), stored('ssd', ['a'])],
    ],
    [
      'removed from one tier: the other keeps it',
      [stored('mem', ['a']), stored('ssd', ['a']), removed('mem', ['a'])],
      [stored('ssd', ['a'])],
    ],
    ['truncated: no longer a whole copy', [stored('mem', ['a', 'b']), truncated('mem', ['a'])], [stored('mem', ['b'])]],
    ['removed where never held: nothing', [removed('ssd', ['a'])], []],
    [
      'models in first-seen order',
      [stored('mem', ['a'], 'y'), stored('mem', ['b'], 'x')],
      [stored('mem', ['a'], 'y'), stored('mem', ['b'], 'x')],
    ],
    ['stored again after a removal', [stored('mem', ['a']), removed('mem', ['a']), stored('mem', ['a'])], [stored('mem', ['a'])]],
  ])('%s', (_, changes, want) => {
    const sut = new TierHoldings();
    for (const c of changes) sut.apply(c);
    expect(sut.report()).toEqual(want);
  });
});
