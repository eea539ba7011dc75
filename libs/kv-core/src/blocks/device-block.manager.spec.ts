import { DeviceBlockManager } from './device-block.manager.js';

/** A manager with `active` blocks held and `cached` blocks released under keys k0, k1, …. */
function setup(capacity: number, cached = 0, active = 0) {
  const evicted: Array<[string, number]> = [];
  const sut = new DeviceBlockManager(capacity, (key, id) => evicted.push([key, id]));
  const ids = sut.allocate(cached + active)!;
  ids.slice(0, cached).forEach((id, i) => sut.commit(id, `k${i}`));
  sut.release(ids.slice(0, cached));
  return { sut, evicted, cachedIds: ids.slice(0, cached), activeIds: ids.slice(cached) };
}

describe(DeviceBlockManager.name, () => {
  describe('allocate', () => {
    it.each([
      ['fresh manager hands out ids in order', 4, 0, 0, 2, [0, 1], [2, 0, 2]],
      ['exactly all blocks', 3, 0, 0, 3, [0, 1, 2], [0, 0, 3]],
      ['zero blocks', 2, 0, 0, 0, [], [2, 0, 0]],
      ['more than available → null, nothing taken', 2, 0, 1, 2, null, [1, 0, 1]],
      ['free blocks before cached ones', 4, 2, 0, 2, [2, 3], [0, 2, 2]],
      ['cached blocks are reclaimed oldest first', 3, 2, 1, 1, [0], [0, 1, 2]],
      ['all cached reclaimed', 2, 2, 0, 2, [0, 1], [0, 0, 2]],
      ['cached count toward availability only once', 3, 2, 1, 3, null, [0, 2, 1]],
    ])('%s', (_name, capacity, cached, active, n, expected, [free, nCached, nActive]) => {
      const { sut } = setup(capacity, cached, active);
      expect(sut.allocate(n)).toEqual(expected);
      expect([sut.numFree, sut.numCached, sut.numActive]).toEqual([free, nCached, nActive]);
      sut.checkInvariant();
    });

    it('tells the listener which keys left the device, and forgets them', () => {
      const { sut, evicted } = setup(2, 2);
      sut.allocate(1);
      expect(evicted).toEqual([['k0', 0]]);
      expect(sut.find('k0')).toBeUndefined();
      expect(sut.find('k1')).toBe(1);
    });

    it('reuses the most recently released free blocks first (LIFO)', () => {
      const { sut } = setup(4, 0, 4);
      sut.release([1]);
      sut.release([3]);
      expect(sut.allocate(2)).toEqual([3, 1]);
    });

    it.each([[-1], [1.5]])('rejects count %p', (n) => {
      expect(() => setup(2).sut.allocate(n)).toThrow(RangeError);
    });
  });

  describe('prefix sharing', () => {
    it('matches the longest prefix of keys present, cached or active', () => {
      const { sut, activeIds } = setup(5, 2, 1);
      sut.commit(activeIds[0]!, 'k2');
      expect(sut.match(['k0', 'k1', 'k2', 'k3'])).toEqual([0, 1, 2]);
      expect(sut.match(['k1', 'k0'])).toEqual([1, 0]);
      expect(sut.match(['x', 'k0'])).toEqual([]);
    });

    it('acquire makes a cached block active again and protects it from eviction', () => {
      const { sut } = setup(2, 2);
      sut.acquire([0]);
      expect(sut.numCached).toBe(1);
      expect(sut.allocate(1)).toEqual([1]);
      expect(sut.allocate(1)).toBeNull();
      sut.checkInvariant();
    });

    it('keeps a shared block until its last holder releases it, then caches it', () => {
      const { sut } = setup(2, 0, 1);
      sut.commit(0, 'k');
      sut.acquire([0]);
      sut.release([0]);
      expect(sut.refCount(0)).toBe(1);
      sut.release([0]);
      expect(sut.numCached).toBe(1);
      expect(sut.find('k')).toBe(0);
      sut.checkInvariant();
    });

    it('an unnamed block goes back to the free stack when released', () => {
      const { sut } = setup(2, 0, 1);
      sut.release([0]);
      expect([sut.numFree, sut.numCached]).toEqual([2, 0]);
    });

    it('a released block becomes the most recently used', () => {
      const { sut } = setup(3, 0, 3);
      ['a', 'b', 'c'].forEach((k, i) => sut.commit(i, k));
      sut.release([1]);
      sut.release([0]);
      sut.release([2]);
      expect(sut.allocate(3)).toEqual([1, 0, 2]);
    });

    it.each([
      // [cap, released in order, left cached (oldest first), evicted keys]
      [Infinity, ['a', 'b', 'c'], 3, []],
      [2, ['a', 'b', 'c'], 2, ['a']],
      [0, ['a', 'b', 'c'], 0, ['a', 'b', 'c']],
    ] as const)('with at most %s cached blocks, releasing %j keeps %s and evicts the oldest %j', (cap, keys, left, gone) => {
      const evicted: string[] = [];
      const sut = new DeviceBlockManager(4, (key) => evicted.push(key));
      sut.setMaxCached(cap);
      const ids = sut.allocate(keys.length)!;
      keys.forEach((k, i) => sut.commit(ids[i]!, k));
      keys.forEach((_, i) => sut.release([ids[i]!]));
      expect(sut.numCached).toBe(left);
      expect(evicted).toEqual(gone);
      expect(sut.numAvailable).toBe(4);
      sut.checkInvariant();
    });

    it('lowering the cap evicts at once; held blocks are never evicted', () => {
      const { sut, evicted } = setup(6, 3, 2);
      sut.setMaxCached(1);
      expect(evicted.map(([k]) => k)).toEqual(['k0', 'k1']);
      expect(sut.numCached).toBe(1);
      expect(sut.numActive).toBe(2);
      expect(() => sut.setMaxCached(-1)).toThrow(RangeError);
    });

    it('commit refuses a second block for the same content (first one wins)', () => {
      const { sut } = setup(3, 0, 2);
      expect(sut.commit(0, 'k')).toBe(true);
      expect(sut.commit(1, 'k')).toBe(false);
      expect(sut.keyOf(1)).toBeUndefined();
      expect(sut.commit(0, 'k')).toBe(true);
      sut.checkInvariant();
    });
  });

  describe('broken invariants throw before changing anything', () => {
    const cases: Array<[string, (sut: DeviceBlockManager) => void, RegExp | typeof RangeError]> = [
      ['double release', (s) => s.release([2]), /double release/],
      ['double release inside one call', (s) => s.release([1, 1, 1]), /double release/],
      ['acquire of a free block', (s) => s.acquire([2]), /free block/],
      ['unknown id', (s) => s.release([99]), RangeError],
      ['negative id', (s) => s.acquire([-1]), RangeError],
      ['commit of an unheld block', (s) => s.commit(0, 'x'), /no sequence holds/],
      ['commit of another key over a named block', (s) => s.commit(1, 'y'), /already holds/],
    ];
    it.each(cases)('%s', (_name, act, error) => {
      const { sut } = setup(3, 1, 1);
      sut.commit(1, 'named');
      sut.acquire([1]);
      const before = JSON.stringify([sut.counts(), [0, 1, 2].map((id) => [sut.refCount(id), sut.keyOf(id)])]);
      expect(() => act(sut)).toThrow(error);
      expect(JSON.stringify([sut.counts(), [0, 1, 2].map((id) => [sut.refCount(id), sut.keyOf(id)])])).toBe(before);
      sut.checkInvariant();
    });
  });

  describe('evict, grow and shrink', () => {
    it('evict reclaims cached blocks oldest first, up to what is cached', () => {
      const { sut, evicted } = setup(4, 3);
      expect(sut.evict(2)).toBe(2);
      expect(evicted.map(([k]) => k)).toEqual(['k0', 'k1']);
      expect(sut.evict(5)).toBe(1);
      expect(sut.numFree).toBe(4);
      sut.checkInvariant();
    });

    it('grow adds free blocks with the next ids', () => {
      const { sut } = setup(2, 0, 2);
      sut.grow(2);
      expect(sut.allocate(2)).toEqual([2, 3]);
      sut.checkInvariant();
    });

    it.each([
      ['free tail', 4, 0, 2, 2, true, 2],
      ['cached tail is evicted', 4, 4, 0, 2, true, 2],
      ['active tail refuses', 4, 0, 4, 1, false, 4],
      ['shrink to nothing', 3, 1, 0, 3, true, 0],
    ])('shrink: %s', (_name, capacity, cached, active, n, ok, after) => {
      const { sut } = setup(capacity, cached, active);
      expect(sut.shrink(n)).toBe(ok);
      expect(sut.capacity).toBe(after);
      sut.checkInvariant();
      const unheld = sut.capacity - sut.numActive;
      if (ok) expect(sut.allocate(sut.numAvailable)).toHaveLength(unheld);
    });

    it('shrink then grow reuses the ids cleanly', () => {
      const { sut } = setup(4, 2, 0);
      expect(sut.shrink(3)).toBe(true);
      sut.grow(3);
      expect(sut.numAvailable).toBe(4);
      expect(sut.match(['k0'])).toEqual([0]);
      expect(sut.match(['k1'])).toEqual([]);
      sut.checkInvariant();
    });
  });

  it('stays consistent under a long random mix of operations', () => {
    let x = 12345;
    const rnd = (n: number) => (x = (x * 1103515245 + 12345) >>> 0) % n;
    const sut = new DeviceBlockManager(32);
    const held: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const op = rnd(5);
      if (op === 0) held.push(...(sut.allocate(rnd(4)) ?? []));
      else if (op === 1 && held.length > 0) sut.release(held.splice(rnd(held.length), 1));
      else if (op === 2 && held.length > 0) {
        const id = held[rnd(held.length)]!;
        if (sut.keyOf(id) === undefined) sut.commit(id, `k${rnd(40)}`);
      } else if (op === 3) {
        const ids = sut.match([`k${rnd(40)}`]);
        sut.acquire(ids);
        held.push(...ids);
      } else if (op === 4) sut.evict(rnd(3));
      if (i % 97 === 0) sut.checkInvariant();
    }
    sut.checkInvariant();
    expect(sut.numActive).toBe(new Set(held).size);
  });
});
