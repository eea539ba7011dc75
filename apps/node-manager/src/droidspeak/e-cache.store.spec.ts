import { CHUNK_TOKENS } from '@mnemo/kv-core';
import { ECacheStore } from './e-cache.store.js';

const D = 4;
const CHUNK_BYTES = CHUNK_TOKENS * D * 4;
/** E of `tokens` positions where position t holds t + layer / 10 in every lane. */
const eOf = (tokens: number, layer = 0) => Float32Array.from({ length: tokens * D }, (_, i) => Math.floor(i / D) + layer / 10);

describe(ECacheStore.name, () => {
  it('keeps whole chunks only and gives back any prefix of them, exactly', () => {
    const sut = new ECacheStore(10 * CHUNK_BYTES);
    sut.put('m', ['a', 'b'], 2, eOf(600, 2), 600);
    expect(sut.sizeBytes).toBe(2 * CHUNK_BYTES);
    expect(sut.get('m', ['a', 'b'], 2, 512)).toEqual(eOf(512, 2));
    expect(sut.get('m', ['a', 'b'], 2, 300)).toEqual(eOf(300, 2));
  });

  it.each<[string, string, readonly string[], number, number]>([
    ['another layer', 'm', ['a', 'b'], 3, 512],
    ['another model', 'x', ['a', 'b'], 2, 512],
    ['a chunk never stored', 'm', ['a', 'c'], 2, 512],
    ['past the keys given', 'm', ['a'], 2, 300],
    ['nothing asked', 'm', ['a'], 2, 0],
  ])('misses for %s', (_, model, keys, layer, until) => {
    const sut = new ECacheStore(10 * CHUNK_BYTES);
    sut.put('m', ['a', 'b'], 2, eOf(512, 2), 512);
    expect(sut.get(model, keys, layer, until)).toBeUndefined();
  });

  it('evicts the least recently used chunks past its budget', () => {
    const sut = new ECacheStore(2 * CHUNK_BYTES);
    sut.put('m', ['a'], 1, eOf(256), 256);
    sut.put('m', ['b'], 1, eOf(256), 256);
    expect(sut.get('m', ['a'], 1, 256)).toBeDefined(); // a is now the most recent
    sut.put('m', ['c'], 1, eOf(256), 256);
    expect(sut.sizeBytes).toBe(2 * CHUNK_BYTES);
    expect(sut.get('m', ['b'], 1, 256)).toBeUndefined();
    expect(sut.get('m', ['a'], 1, 256)).toBeDefined();
    expect(sut.get('m', ['c'], 1, 256)).toBeDefined();
  });

  it('stores nothing with a zero budget or a malformed array', () => {
    const none = new ECacheStore(0);
    none.put('m', ['a'], 1, eOf(256), 256);
    expect(none.sizeBytes).toBe(0);
    const sut = new ECacheStore(CHUNK_BYTES);
    sut.put('m', ['a'], 1, new Float32Array(257), 256);
    expect(sut.sizeBytes).toBe(0);
  });
});
