import { PrefetchedChunks } from './prefetched.chunks.js';

const chunk = (key: string, position: number, stamp: number, layers = [0, 1, 2]) => ({ model: 'm', key, position, layers, bytes: 100, stamp });
const keysOf = (ds: Array<{ key: string; layer: number }>) => ds.map((d) => `${d.key}/${d.layer}`);

describe(PrefetchedChunks.name, () => {
  let sut: PrefetchedChunks;
  beforeEach(() => {
    sut = new PrefetchedChunks();
  });

  it.each<[string, number, string[]]>([
    ['nothing needed', 0, []],
    ['one segment: the oldest advisory, its last layer, its last chunk', 1, ['a1/2']],
    ['a whole layer of the oldest before any earlier layer', 2, ['a1/2', 'a0/2']],
    ['the oldest advisory entirely before the newer one', 6, ['a1/2', 'a0/2', 'a1/1', 'a0/1', 'a1/0', 'a0/0']],
    ['then the newer one', 7, ['a1/2', 'a0/2', 'a1/1', 'a0/1', 'a1/0', 'a0/0', 'b0/2']],
    ['everything there is, when more is asked', 10_000, ['a1/2', 'a0/2', 'a1/1', 'a0/1', 'a1/0', 'a0/0', 'b0/2', 'b0/1', 'b0/0']],
  ])('purges in cooperative order: %s', (_n, segments, expected) => {
    sut.add('old', 1e9, chunk('a0', 0, 10));
    sut.add('old', 1e9, chunk('a1', 1, 10));
    sut.add('new', 1e9, chunk('b0', 0, 20));
    expect(keysOf(sut.purge(segments * 100))).toEqual(expected);
    expect(sut.purgedSegments).toBe(expected.length);
  });

  it('never purges a chunk a request adopted', () => {
    sut.add('x', 1e9, chunk('a0', 0, 10));
    sut.add('x', 1e9, chunk('b0', 0, 20));
    sut.adopt(['a0']);
    expect(keysOf(sut.purge(10_000))).toEqual(['b0/2', 'b0/1', 'b0/0']);
  });

  it('forget drops what only that advisory wanted', () => {
    sut.add('x', 1e9, chunk('a0', 0, 10, [0, 1]));
    sut.add('y', 1e9, chunk('a0', 0, 10, [0, 1]));
    sut.add('x', 1e9, chunk('b0', 1, 10, [0, 1]));
    expect(keysOf(sut.forget('x'))).toEqual(['b0/0', 'b0/1']);
    expect(sut.has('a0')).toBe(true);
    expect(keysOf(sut.forget('y'))).toEqual(['a0/0', 'a0/1']);
    expect(sut.size).toBe(0);
    expect(sut.forget('unknown')).toEqual([]);
  });

  it('forget skips what was purged or adopted since', () => {
    sut.add('x', 1e9, chunk('a0', 0, 10, [0, 1]));
    sut.add('x', 1e9, chunk('b0', 1, 10, [0, 1]));
    sut.adopt(['a0']);
    sut.purge(100);
    expect(keysOf(sut.forget('x'))).toEqual(['b0/0']);
  });

  it('expiry forgets advisories whose time passed', () => {
    sut.add('soon', 100, chunk('a0', 0, 10, [0]));
    sut.add('later', 200, chunk('b0', 0, 10, [0]));
    expect(keysOf(sut.expire(150))).toEqual(['a0/0']);
    expect(sut.has('b0')).toBe(true);
  });
});
