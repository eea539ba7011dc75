import type { ChunkHolding } from '../directory/kv-directory.types.js';
import { longestPartial, partialSource, withPartialSource } from './partial-source.policy.js';

const held = (table: Record<string, ChunkHolding[]>) => (key: string) => table[key] ?? [];

describe(partialSource.name, () => {
  it.each([
    ['nobody holds any', [['a1', 'a2']], {}, null],
    [
      'the longest held in the first list',
      [['a1', 'a2', 'a3']],
      { a1: [{ nodeId: 'home', tier: 'host' }], a2: [{ nodeId: 'home', tier: 'ssd' }] },
      { nodeId: 'home', key: 'a2' },
    ],
    [
      'the chosen node holds it: its own tiers find it',
      [['a1']],
      {
        a1: [
          { nodeId: 'home', tier: 'host' },
          { nodeId: 'n1', tier: 'ssd' },
        ],
      },
      null,
    ],
    ['a copy only on a device cannot be served to peers', [['a1']], { a1: [{ nodeId: 'home', tier: 'device' }] }, null],
    [
      'the fastest holder first',
      [['a1']],
      {
        a1: [
          { nodeId: 'x', tier: 'host' },
          { nodeId: 'home', tier: 'ssd' },
        ],
      },
      { nodeId: 'x', key: 'a1' },
    ],
    [
      'the second list when the first has none',
      [['a1'], ['b1', 'b2']],
      { b1: [{ nodeId: 'home', tier: 'ssd' }] },
      { nodeId: 'home', key: 'b1' },
    ],
    [
      'the first list wins over a longer one later',
      [['a1'], ['b1', 'b2']],
      { a1: [{ nodeId: 'home', tier: 'ssd' }], b2: [{ nodeId: 'home', tier: 'host' }] },
      { nodeId: 'home', key: 'a1' },
    ],
  ] as const)('%s', (_name, candidates, table, expected) => {
    expect(partialSource('n1', longestPartial(candidates, held(table as Record<string, ChunkHolding[]>)))).toEqual(expected);
  });
});

describe(longestPartial.name, () => {
  it('names every node that holds it off the device, fastest first as the directory lists them', () => {
    const table = {
      a2: [
        { nodeId: 'x', tier: 'host' },
        { nodeId: 'y', tier: 'device' },
        { nodeId: 'z', tier: 'ssd' },
      ],
    } as Record<string, ChunkHolding[]>;
    expect(longestPartial([['a1', 'a2', 'a3']], held(table))).toEqual({
      key: 'a2',
      held: [
        { nodeId: 'x', tier: 'host' },
        { nodeId: 'z', tier: 'ssd' },
      ],
    });
    expect(longestPartial([['a1']], held(table))).toBeNull();
  });
});

describe(withPartialSource.name, () => {
  it.each([
    ['appends to the node already a source', [{ nodeId: 'a', chunkKeys: ['k0', 'k1'] }], [{ nodeId: 'a', chunkKeys: ['k0', 'k1', 'p'] }]],
    [
      'adds the node when it was none',
      [{ nodeId: 'b', chunkKeys: ['k0'] }],
      [
        { nodeId: 'b', chunkKeys: ['k0'] },
        { nodeId: 'a', chunkKeys: ['p'] },
      ],
    ],
    ['from no sources', [], [{ nodeId: 'a', chunkKeys: ['p'] }]],
  ])('%s', (_name, sources, expected) => {
    expect(withPartialSource(sources, { nodeId: 'a', key: 'p' })).toEqual(expected);
  });
});
