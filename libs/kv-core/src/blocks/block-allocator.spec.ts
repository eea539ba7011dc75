import { BlockAllocator } from './block-allocator.js';

describe(BlockAllocator.name, () => {
  describe('allocate', () => {
    it.each([
      ['fresh allocator hands out ids in order', 4, [2], [[0, 1]], 2],
      ['exactly all blocks', 3, [3], [[0, 1, 2]], 0],
      ['zero blocks', 2, [0], [[]], 2],
      ['more than free → null, nothing taken', 2, [3], [null], 2],
      ['second request fails once full', 3, [2, 2], [[0, 1], null], 1],
      ['empty cache', 0, [1], [null], 0],
    ])('%s', (_name, capacity, requests, expected, free) => {
      const sut = new BlockAllocator(capacity);
      expect(requests.map((n) => sut.allocate(n))).toEqual(expected);
      expect(sut.numFree).toBe(free);
      sut.checkInvariant();
    });

    it('reuses the most recently released blocks first (LIFO)', () => {
      const sut = new BlockAllocator(4);
      sut.allocate(4);
      sut.release([1]);
      sut.release([3]);
      expect(sut.allocate(2)).toEqual([3, 1]);
    });

    it.each([[-1], [1.5]])('rejects count %p', (n) => {
      expect(() => new BlockAllocator(2).allocate(n)).toThrow(RangeError);
    });
  });

  describe('reference counts', () => {
    it('keeps a shared block until its last holder releases it', () => {
      const sut = new BlockAllocator(2);
      const [id] = sut.allocate(1)!;
      sut.incRef([id!]);
      expect(sut.refCount(id!)).toBe(2);
      expect(sut.decRef([id!])).toEqual([]);
      expect(sut.isFree(id!)).toBe(false);
      expect(sut.decRef([id!])).toEqual([id]);
      expect(sut.isFree(id!)).toBe(true);
      expect(sut.numFree).toBe(2);
      sut.checkInvariant();
    });

    it('counts repeated ids in one decRef as one reference each', () => {
      const sut = new BlockAllocator(1);
      sut.allocate(1);
      sut.incRef([0]);
      expect(sut.decRef([0, 0])).toEqual([0]);
      sut.checkInvariant();
    });

    const broken: Array<[string, (sut: BlockAllocator) => void, RegExp | typeof RangeError]> = [
      ['double free', (s) => s.release([0]), /double free/],
      ['double free inside one call', (s) => s.release([1, 1]), /double free/],
      ['incRef of a free block', (s) => s.incRef([2]), /free block/],
      ['unknown id', (s) => s.release([99]), RangeError],
      ['negative id', (s) => s.incRef([-1]), RangeError],
    ];

    it.each(broken)('throws on a broken invariant: %s, leaving state unchanged', (_name, act, error) => {
      const sut = new BlockAllocator(3);
      sut.allocate(2);
      sut.release([0]);
      const before = [0, 1, 2].map((id) => sut.refCount(id));
      expect(() => act(sut)).toThrow(error);
      expect([0, 1, 2].map((id) => sut.refCount(id))).toEqual(before);
      sut.checkInvariant();
    });

    it('validates a whole decRef batch before releasing any of it', () => {
      const sut = new BlockAllocator(2);
      sut.allocate(1);
      expect(() => sut.release([0, 1])).toThrow(/double free/);
      expect(sut.refCount(0)).toBe(1);
    });
  });

  describe('grow and shrink', () => {
    it('grows with the next ids', () => {
      const sut = new BlockAllocator(2);
      sut.allocate(2);
      sut.grow(2);
      expect(sut.capacity).toBe(4);
      expect(sut.allocate(2)?.sort()).toEqual([2, 3]);
      sut.checkInvariant();
    });

    it.each([
      ['top blocks free', [0, 1], 2, true, 2],
      ['a top block in use', [3], 2, false, 4],
      ['shrink to zero', [], 4, true, 0],
      ['shrink by zero', [0, 1, 2, 3], 0, true, 4],
    ])('%s', (_name, used, n, ok, capacity) => {
      const sut = new BlockAllocator(4);
      sut.allocate(4);
      sut.release([0, 1, 2, 3].filter((id) => !used.includes(id)));
      expect(sut.shrink(n)).toBe(ok);
      expect(sut.capacity).toBe(capacity);
      sut.checkInvariant();
      expect(sut.numFree + used.length).toBe(capacity);
    });
  });

  it('keeps its invariant through a seeded random workload', () => {
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const sut = new BlockAllocator(64);
    const held: number[][] = [];
    for (let step = 0; step < 2000; step++) {
      const op = rand(3);
      if (op === 0) {
        const got = sut.allocate(rand(10));
        if (got) held.push(got);
        else expect(sut.numFree).toBeLessThan(10);
      } else if (op === 1 && held.length > 0) {
        const ids = held[rand(held.length)]!;
        sut.incRef(ids);
        held.push([...ids]);
      } else if (held.length > 0) {
        sut.release(held.splice(rand(held.length), 1)[0]!);
      }
      const refs = held.flat().length;
      const used = new Set(held.flat()).size;
      expect(sut.numUsed).toBe(used);
      expect(refs).toBeGreaterThanOrEqual(used);
    }
    sut.checkInvariant();
  });
});
