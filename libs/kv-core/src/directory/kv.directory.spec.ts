import { KvDirectory } from './kv.directory.js';
import type { DirectoryChange, DirectoryTier } from './kv-directory.types.js';

const stored = (tier: DirectoryTier, ...keys: string[]): DirectoryChange => ({ kind: 'stored', tier, keys });
const removed = (tier: DirectoryTier, ...keys: string[]): DirectoryChange => ({ kind: 'removed', tier, keys });
const truncated = (tier: DirectoryTier, ...keys: string[]): DirectoryChange => ({ kind: 'truncated', tier, keys });

describe(KvDirectory.name, () => {
  describe('holders', () => {
    it.each<[string, Array<[string, DirectoryChange[]]>, Array<{ nodeId: string; tier: DirectoryTier }>]>([
      ['unknown key', [], []],
      ['one node, one tier', [['n1', [stored('host', 'k')]]], [{ nodeId: 'n1', tier: 'host' }]],
      ['fastest tier of a node wins', [['n1', [stored('ssd', 'k'), stored('device', 'k')]]], [{ nodeId: 'n1', tier: 'device' }]],
      [
        'removed from one tier, still on another',
        [['n1', [stored('device', 'k'), stored('ssd', 'k'), removed('device', 'k')]]],
        [{ nodeId: 'n1', tier: 'ssd' }],
      ],
      ['removed from its only tier', [['n1', [stored('host', 'k'), removed('host', 'k')]]], []],
      [
        'a truncated copy does not count',
        [['n1', [stored('device', 'k'), stored('ssd', 'k'), truncated('device', 'k')]]],
        [{ nodeId: 'n1', tier: 'ssd' }],
      ],
      ['removing what was never stored is a no-op', [['n1', [removed('host', 'k')]]], []],
      [
        'several nodes: fastest first, then node id',
        [
          ['n2', [stored('ssd', 'k')]],
          ['n3', [stored('device', 'k')]],
          ['n1', [stored('ssd', 'k')]],
        ],
        [
          { nodeId: 'n3', tier: 'device' },
          { nodeId: 'n1', tier: 'ssd' },
          { nodeId: 'n2', tier: 'ssd' },
        ],
      ],
    ])('%s', (_n, events, expected) => {
      const sut = new KvDirectory(100);
      for (const [node, changes] of events) sut.apply(node, changes);
      expect(sut.holders('k')).toEqual(expected);
    });
  });

  describe('prefixes', () => {
    it.each<[string, Array<[string, DirectoryChange[]]>, string[], Array<[string, number, DirectoryTier[]]>]>([
      ['nothing known', [], ['a', 'b'], []],
      ['whole prefix on one node', [['n1', [stored('host', 'a', 'b')]]], ['a', 'b'], [['n1', 2, ['host', 'host']]]],
      ['prefix ends at the first missing key', [['n1', [stored('host', 'a', 'c')]]], ['a', 'b', 'c'], [['n1', 1, ['host']]]],
      ['a node without the first key has no prefix', [['n1', [stored('device', 'b')]]], ['a', 'b'], []],
      ['tiers per chunk', [['n1', [stored('device', 'a'), stored('ssd', 'b')]]], ['a', 'b'], [['n1', 2, ['device', 'ssd']]]],
      [
        'two nodes, different depths',
        [
          ['n1', [stored('host', 'a')]],
          ['n2', [stored('ssd', 'a', 'b', 'c')]],
        ],
        ['a', 'b', 'c'],
        [
          ['n1', 1, ['host']],
          ['n2', 3, ['ssd', 'ssd', 'ssd']],
        ],
      ],
      ['empty key list', [['n1', [stored('host', 'a')]]], [], []],
    ])('%s', (_n, events, keys, expected) => {
      const sut = new KvDirectory(100);
      for (const [node, changes] of events) sut.apply(node, changes);
      expect(sut.prefixes(keys).map((p) => [p.nodeId, p.prefixChunks, p.tiers])).toEqual(expected);
    });
  });

  it('forgets a node that left', () => {
    const sut = new KvDirectory(100);
    sut.apply('n1', [stored('host', 'a', 'b')]);
    sut.apply('n2', [stored('host', 'a')]);
    sut.dropNode('n1');
    expect(sut.holders('a')).toEqual([{ nodeId: 'n2', tier: 'host' }]);
    expect(sut.holders('b')).toEqual([]);
    expect(sut.stats()).toMatchObject({ keys: 1, holdings: 1 });
  });

  it('a full report replaces what was known about the node, and only that node', () => {
    const sut = new KvDirectory(100);
    sut.apply('n1', [stored('device', 'a', 'b')]);
    sut.apply('n2', [stored('host', 'b')]);
    sut.replaceNode('n1', [stored('ssd', 'b', 'c'), removed('ssd', 'c')]);
    expect(sut.holders('a')).toEqual([]);
    expect(sut.holders('b')).toEqual([
      { nodeId: 'n2', tier: 'host' },
      { nodeId: 'n1', tier: 'ssd' },
    ]);
    expect(sut.holders('c')).toEqual([{ nodeId: 'n1', tier: 'ssd' }]);
  });

  describe('bounded memory', () => {
    it('never holds more than the bound, forgetting the least recently used keys', () => {
      const sut = new KvDirectory(1000);
      for (let i = 0; i < 10_000; i++) sut.apply(`n${i % 3}`, [stored('host', `k${i}`)]);
      expect(sut.stats()).toEqual({ keys: 1000, holdings: 1000, evictions: 9000 });
      expect(sut.holders('k9999')).toHaveLength(1);
      expect(sut.holders('k0')).toEqual([]);
      // Per-node indexes shrink with the keys: nothing leaks past the bound.
      expect(sut.keysOf('n0') + sut.keysOf('n1') + sut.keysOf('n2')).toBe(1000);
    });

    it('a key read by routing survives a flood of newer keys that evicts its neighbours', () => {
      const sut = new KvDirectory(4);
      sut.apply('n1', [stored('host', 'hot', 'cold')]);
      sut.apply('n1', [stored('host', 'x1', 'x2')]);
      sut.prefixes(['hot']);
      sut.apply('n1', [stored('host', 'x3', 'x4')]);
      expect(sut.holders('hot')).toHaveLength(1);
      expect(sut.holders('cold')).toEqual([]);
      expect(sut.stats().evictions).toBe(2);
    });

    it('counts (key, node) pairs, so a key on many nodes uses that many slots', () => {
      const sut = new KvDirectory(3);
      for (const n of ['n1', 'n2', 'n3']) sut.apply(n, [stored('host', 'shared')]);
      sut.apply('n1', [stored('host', 'new')]);
      expect(sut.holders('shared')).toEqual([]);
      expect(sut.stats()).toEqual({ keys: 1, holdings: 1, evictions: 1 });
    });

    it.each([0, -1, 1.5, NaN])('refuses a bound of %p', (bound) => {
      expect(() => new KvDirectory(bound)).toThrow(RangeError);
    });
  });
});
