import { BufferPool, type BufferMemory } from './buffer.pool.js';

const KiB = 1024;

/** Memory that remembers what was freed (the addon detaches a freed buffer). */
function memory(): BufferMemory & { freed: Set<ArrayBuffer> } {
  const freed = new Set<ArrayBuffer>();
  return { freed, alloc: (bytes) => new ArrayBuffer(Math.ceil(bytes / 4096) * 4096), free: (b) => void freed.add(b) };
}

describe(BufferPool.name, () => {
  it.each<[string, number[], number, number | 'new']>([
    ['an idle buffer of the size asked for', [64 * KiB], 64 * KiB, 0],
    ['the smallest idle buffer that fits', [256 * KiB, 96 * KiB, 80 * KiB], 64 * KiB, 2],
    ['a new one when every idle buffer is too small', [32 * KiB], 64 * KiB, 'new'],
    ['a new one rather than one more than twice the size', [256 * KiB], 64 * KiB, 'new'],
    ['a new one when none is idle', [], 64 * KiB, 'new'],
  ])('take hands out %s', (_name, idle, ask, expected) => {
    const sut = new BufferPool(memory(), 1024 * KiB);
    const given = idle.map((n) => sut.take(n));
    for (const b of given) sut.give(b);
    const got = sut.take(ask);
    expect(got.byteLength).toBeGreaterThanOrEqual(ask);
    if (expected === 'new') expect(given).not.toContain(got);
    else expect(got).toBe(given[expected]);
    expect(sut.stats().buffers).toBe(idle.length - (expected === 'new' ? 0 : 1));
  });

  it('frees the oldest idle buffers past its idle budget, and anything larger than the budget at once', () => {
    const mem = memory();
    const sut = new BufferPool(mem, 200 * KiB);
    const [a, b, c] = [sut.take(64 * KiB), sut.take(64 * KiB), sut.take(96 * KiB)];
    sut.give(a);
    sut.give(b);
    sut.give(c);
    expect(sut.stats()).toEqual({ buffers: 2, bytes: 160 * KiB });
    expect([mem.freed.has(a), mem.freed.has(b)]).toEqual([true, false]);
    const huge = sut.take(256 * KiB);
    sut.give(huge);
    expect(mem.freed.has(huge)).toBe(true);
    expect(sut.stats().buffers).toBe(2);
  });

  it('frees its idle buffers on close, and buffers given back after it at once', () => {
    const mem = memory();
    const sut = new BufferPool(mem);
    const [a, b] = [sut.take(4 * KiB), sut.take(4 * KiB)];
    sut.give(a);
    sut.close();
    expect(mem.freed.has(a)).toBe(true);
    expect(sut.stats()).toEqual({ buffers: 0, bytes: 0 });
    sut.give(b);
    expect(mem.freed.has(b)).toBe(true);
  });
});
