import { HostBufferPool } from './host-buffer.pool.js';

const KiB = 1024;

describe(HostBufferPool.name, () => {
  it.each<[string, number[], number, number | 'new']>([
    ['an idle buffer of the size asked for', [64 * KiB], 64 * KiB, 0],
    ['the smallest idle buffer that fits', [256 * KiB, 96 * KiB, 80 * KiB], 64 * KiB, 2],
    ['a new one when every idle buffer is too small', [32 * KiB], 64 * KiB, 'new'],
    ['a new one rather than one more than twice the size', [256 * KiB], 64 * KiB, 'new'],
    ['a new one when none is idle', [], 64 * KiB, 'new'],
  ])('take hands out %s', (_name, idle, ask, expected) => {
    const sut = new HostBufferPool(1024 * KiB);
    const given = idle.map((n) => sut.take(n));
    for (const b of given) sut.give(b);
    const got = sut.take(ask);
    expect(got.byteLength).toBeGreaterThanOrEqual(ask);
    if (expected === 'new') expect(given).not.toContain(got);
    else expect(got).toBe(given[expected]);
    expect(sut.stats().buffers).toBe(idle.length - (expected === 'new' ? 0 : 1));
    sut.close();
  });

  it('frees the oldest idle buffers past its idle budget, and anything larger than the budget at once', () => {
    const sut = new HostBufferPool(200 * KiB);
    const [a, b, c] = [sut.take(64 * KiB), sut.take(64 * KiB), sut.take(96 * KiB)];
    sut.give(a);
    sut.give(b);
    sut.give(c);
    expect(sut.stats()).toEqual({ buffers: 2, bytes: 160 * KiB });
    expect(a.byteLength).toBe(0); // freed: detached
    expect(b.byteLength).toBe(64 * KiB);
    const huge = sut.take(256 * KiB);
    sut.give(huge);
    expect(huge.byteLength).toBe(0);
    expect(sut.stats().buffers).toBe(2);
    sut.close();
  });

  it('frees its idle buffers on close, and buffers given back after it at once', () => {
    const sut = new HostBufferPool();
    const [a, b] = [sut.take(4 * KiB), sut.take(4 * KiB)];
    sut.give(a);
    sut.close();
    expect(a.byteLength).toBe(0);
    expect(sut.stats()).toEqual({ buffers: 0, bytes: 0 });
    sut.give(b);
    expect(b.byteLength).toBe(0);
  });
});
