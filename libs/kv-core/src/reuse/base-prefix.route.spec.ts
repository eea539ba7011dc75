import type { NodePrefix } from '../directory/kv-directory.types.js';
import { eCacheKey } from './e-cache.keys.js';
import { routeKeysFor, transitionLayers, withECacheKeys } from './base-prefix.route.js';

const hex = (n: number) => n.toString(16).padStart(32, '0');
const ownKeys = [hex(1), hex(2)];
const baseKeys = [hex(11), hex(12)];
const at = (nodeId: string, prefixChunks: number): NodePrefix => ({ nodeId, prefixChunks, tiers: Array(prefixChunks).fill('host') });

describe(routeKeysFor.name, () => {
  const cases: Array<[string, NodePrefix[], NodePrefix[] | undefined, 'own' | 'base']> = [
    ['no base model', [], undefined, 'own'],
    ['nothing held anywhere', [], [], 'own'],
    ['only the base is held', [], [at('n1', 1)], 'base'],
    ['the base reaches further', [at('n2', 1)], [at('n1', 2)], 'base'],
    ['a tie keeps the exact own chain', [at('n2', 2)], [at('n1', 2)], 'own'],
    ['own reaches further', [at('n2', 2)], [at('n1', 1)], 'own'],
  ];
  it.each(cases)('%s → %s', (_name, own, base, chain) => {
    const sut = routeKeysFor({ chunkKeys: ownKeys, prefixes: own }, base && { chunkKeys: baseKeys, prefixes: base });
    expect(sut.chain).toBe(chain);
    expect(sut.chunkKeys).toEqual(chain === 'own' ? ownKeys : baseKeys);
    expect(sut.prefixes).toEqual(chain === 'own' ? own : base);
  });

  it('a base of a prompt shorter than a chunk is never routed on', () => {
    expect(routeKeysFor({ chunkKeys: [], prefixes: [] }, { chunkKeys: [], prefixes: [at('n1', 1)] }).chain).toBe('own');
  });
});

describe(transitionLayers.name, () => {
  const p = (r1: number, u1: number, r2: number) => ({ pattern: { r1, u1, r2 } });
  it.each([
    ['empty frontier', [], []],
    ['no transition: full prefill, full reuse, reuse above r2', [p(0, 0, 6), p(0, 0, 0), p(0, 0, 4)], []],
    ['reuse band then recompute', [p(0, 2, 4)], [2]],
    ['u1 = r2 ships nothing', [p(1, 3, 3)], []],
    ['several, deduplicated and sorted', [p(0, 3, 7), p(0, 2, 4), p(1, 2, 5)], [2, 3]],
  ])('%s', (_name, frontier, layers) => {
    expect(transitionLayers(frontier)).toEqual(layers);
  });
});

describe(withECacheKeys.name, () => {
  const e = (layer: number, c: number) => eCacheKey(baseKeys[c]!, layer);
  it('adds the E keys the source holds, from chunk 0, per layer', () => {
    const held = (keys: readonly string[]) => (keys[0] === e(2, 0) ? [at('n1', 2), at('n3', 1)] : [at('n1', 1)]);
    const sut = withECacheKeys([{ nodeId: 'n1', chunkKeys: baseKeys }], baseKeys, [2, 3], held);
    expect(sut).toEqual([{ nodeId: 'n1', chunkKeys: [...baseKeys, e(2, 0), e(2, 1), e(3, 0)] }]);
  });

  it.each([
    ['no transition layers', [], () => [at('n1', 2)]],
    ['no node holds E', [2], () => []],
    ['only a node that is no source', [2], () => [at('n9', 2)]],
  ] as Array<[string, number[], () => NodePrefix[]]>)('leaves sources as they are: %s', (_name, layers, held) => {
    const sources = [{ nodeId: 'n1', chunkKeys: baseKeys }];
    expect(withECacheKeys(sources, baseKeys, layers, held)).toEqual(sources);
  });

  it('no sources: nothing to add', () => {
    expect(withECacheKeys([], baseKeys, [2], () => [at('n1', 2)])).toEqual([]);
  });
});
