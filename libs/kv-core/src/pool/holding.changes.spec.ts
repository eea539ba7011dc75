import { HoldingChangeBatch, leadingLayers, removalChanges, TierHoldings, type HoldingChange } from './holding.changes.js';
import { LookupTable } from './lookup.table.js';
import type { Removal } from './lookup.types.js';

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

describe(removalChanges.name, () => {
  const LOC = { deviceIndex: 0, offset: 0, length: 1, crc32c: 0 };
  /** A chunk key per letter (the table takes hex keys only). */
  const K = (name: string): string => name.charCodeAt(0).toString(16).padStart(32, '0');
  const table = (held: Array<[string, 'mem' | 'ssd', number[]]>): LookupTable => {
    const t = new LookupTable({ numLayers: 3 });
    held.forEach(([key, tier, layers], position) => {
      for (const layer of layers) t.put({ chunkKey: K(key), position, layer }, { ...LOC, type: tier, offset: position * 8 + layer }, 0);
    });
    return t;
  };
  const removal = (name: string, tier: 'mem' | 'ssd', layer = 2): Removal => ({
    chunkKey: K(name),
    layer,
    tier,
    location: { ...LOC, type: tier },
    deferred: false,
  });

  it.each<[string, Array<[string, 'mem' | 'ssd', number[]]>, Removal[], HoldingChange[]]>([
    ['no layer left: removed', [], [removal('a', 'mem')], [removed('mem', ['a'])]],
    ['leading layers left: truncated to them', [['a', 'mem', [0, 1]]], [removal('a', 'mem')], [{ ...truncated('mem', ['a']), layers: 2 }]],
    [
      'a gap: truncated to the layers before it',
      [['a', 'ssd', [0, 2]]],
      [removal('a', 'ssd', 1)],
      [{ ...truncated('ssd', ['a']), layers: 1 }],
    ],
    [
      'layer 0 gone, later ones held: truncated to none',
      [['a', 'mem', [1, 2]]],
      [removal('a', 'mem', 0)],
      [{ ...truncated('mem', ['a']), layers: 0 }],
    ],
    ['still whole: no change', [['a', 'mem', [0, 1, 2]]], [removal('a', 'mem')], []],
    [
      'tiers in first-touched order, removed before truncated, truncations grouped by layers left',
      [
        ['b', 'ssd', [0]],
        ['c', 'ssd', [0]],
        ['d', 'mem', [0, 1]],
      ],
      [removal('b', 'ssd'), removal('a', 'ssd'), removal('d', 'mem'), removal('c', 'ssd')],
      [removed('ssd', ['a']), { ...truncated('ssd', ['b', 'c']), layers: 1 }, { ...truncated('mem', ['d']), layers: 2 }],
    ],
  ])('%s', (_, held, removals, want) => {
    expect(removalChanges(table(held), 'm', removals)).toEqual(want.map((c) => ({ ...c, keys: c.keys.map(K) })));
  });

  it.each<[string, number[], number]>([
    ['none', [], 0],
    ['all', [0, 1, 2], 3],
    ['from layer 0 up to a gap', [0, 2], 1],
    ['not from layer 0', [1, 2], 0],
  ])('leadingLayers: %s', (_, layers, want) => {
    expect(leadingLayers(table([['a', 'mem', layers]]), K('a'), 'mem')).toBe(want);
  });
});
