import { chunkKeys, isChunkKey } from '../keys/chunk-key.hasher.js';
import { eCacheBaseOf, eCacheChunks, eCacheKey, eCacheKeys, eCacheModelId, eCacheRowElems } from './e-cache.keys.js';

const tokens = Array.from({ length: 600 }, (_, i) => (i * 7) % 250);
const [k0, k1] = chunkKeys('base', 'salt', tokens);

describe(eCacheKey.name, () => {
  it('is a chunk key, stable, and distinct per layer and from its base key', () => {
    const keys = [0, 1, 2, 3].map((l) => eCacheKey(k0!, l));
    for (const k of keys) expect(isChunkKey(k)).toBe(true);
    expect(new Set([...keys, k0]).size).toBe(5);
    expect(eCacheKey(k0!, 2)).toBe(eCacheKey(k0!, 2));
    expect(eCacheKey(k1!, 2)).not.toBe(eCacheKey(k0!, 2));
  });

  it('is pinned to its byte encoding (a wire contract between nodes)', () => {
    expect(eCacheKey('00000000000000000000000000000000', 0)).toBe('9e3651a75369d4f458ddb02c67eea3dd');
  });

  it.each([[-1], [1.5], [2 ** 32]])('refuses layer %p', (layer) => {
    expect(() => eCacheKey(k0!, layer)).toThrow(RangeError);
  });

  it('refuses a malformed base key', () => {
    expect(() => eCacheKey('nope', 0)).toThrow();
  });
});

describe(eCacheKeys.name, () => {
  it('keys the first n chunks in order', () => {
    expect(eCacheKeys([k0!, k1!], 3, 1)).toEqual([eCacheKey(k0!, 3)]);
    expect(eCacheKeys([k0!, k1!], 3)).toEqual([eCacheKey(k0!, 3), eCacheKey(k1!, 3)]);
  });
});

describe('E-cache model ids', () => {
  it.each([
    ['mnemo-small', 'mnemo-small#e-cache'],
    ['org/model', 'org/model#e-cache'],
  ])('%s ⇄ %s', (base, id) => {
    expect(eCacheModelId(base)).toBe(id);
    expect(eCacheBaseOf(id)).toBe(base);
  });
  it.each([['mnemo-small'], ['#e-cache'], ['x#e-cache-not']])('%s is no E-cache model', (id) => {
    expect(eCacheBaseOf(id)).toBeNull();
  });
});

describe(eCacheChunks.name, () => {
  it.each([
    [0, 0],
    [-3, 0],
    [1, 1],
    [256, 1],
    [257, 2],
  ])('until %i spans %i chunks', (until, n) => {
    expect(eCacheChunks(until)).toBe(n);
  });
});

describe(eCacheRowElems.name, () => {
  it.each([
    [64, 32],
    [2, 1],
    [63, null],
    [0, null],
    [-4, null],
  ])('d_model %i → row %p', (d, row) => {
    expect(eCacheRowElems(d)).toBe(row);
  });
});
