import { DeviceBlockManager } from './device-block.manager.js';
import type { StageRank } from './staged-chunk.set.js';

const rank = (r: Partial<StageRank> = {}): StageRank => ({ priority: 0, dueMs: Infinity, stamp: 0, position: 0, ...r });

/** Capacity 8: `cached` blocks released under keys c0…, then `active` held, the rest free. */
function setup(opts: { cached?: number; active?: number; grouped?: boolean } = {}) {
  const purged: string[] = [];
  const evicted: string[] = [];
  const sut = new DeviceBlockManager(
    8,
    (k) => evicted.push(k),
    opts.grouped ? { groupBlocks: 4 } : undefined,
    (k) => purged.push(k),
  );
  const ids = sut.allocate((opts.cached ?? 0) + (opts.active ?? 0))!;
  ids.slice(0, opts.cached ?? 0).forEach((id, i) => sut.commit(id, `c${i}`));
  sut.release(ids.slice(0, opts.cached ?? 0));
  return { sut, purged, evicted };
}

describe('DeviceBlockManager staged chunks (promotion of prefetched KV)', () => {
  describe('stage', () => {
    it.each([
      // name, setup, blocks to stage, staged?, [free, cached, staged, active] after
      ['into free blocks', {}, 2, true, [6, 0, 2, 0]],
      ['never into cached blocks', { cached: 7 }, 2, false, [1, 7, 0, 0]],
      ['never past the free blocks', { active: 7 }, 2, false, [1, 0, 0, 7]],
      ['exactly the free blocks', { active: 6 }, 2, true, [0, 0, 2, 6]],
      ['grouped: only from free runs', { grouped: true }, 2, true, [6, 0, 2, 0]],
    ] as const)('%s', (_name, opts, n, ok, counts) => {
      const { sut } = setup(opts);
      const ids = sut.stage('x', n, rank());
      expect(ids !== null).toBe(ok);
      const c = sut.counts();
      expect([c.free, c.cached, c.staged, c.active]).toEqual(counts);
      expect(c.free + c.cached + c.staged + c.active).toBe(c.capacity);
      sut.checkInvariant();
    });

    it('a key already staged or already named on the device is not staged again', () => {
      const { sut } = setup({ cached: 1 });
      expect(sut.stage('c0', 2, rank())).toBeNull();
      expect(sut.stage('x', 2, rank())).not.toBeNull();
      expect(sut.stage('x', 2, rank())).toBeNull();
      expect(sut.numStaged).toBe(2);
    });

    it('grouped: a group tail reserved for its owner is not staged into', () => {
      const purged: string[] = [];
      const sut = new DeviceBlockManager(8, undefined, { groupBlocks: 8 }, (k) => purged.push(k));
      sut.allocateFor('seq', 1);
      // 7 free blocks, all in seq's group tail: none in a free run.
      expect(sut.numFree).toBe(7);
      expect(sut.stage('x', 2, rank())).toBeNull();
      sut.checkInvariant();
    });

    it("staged blocks cannot be acquired or released as a sequence's", () => {
      const { sut } = setup();
      const ids = sut.stage('x', 2, rank())!;
      expect(() => sut.acquire([ids[0]!])).toThrow(/free block/);
      expect(() => sut.release([ids[0]!])).toThrow(/double release/);
      sut.checkInvariant();
    });
  });

  describe('reclaim order: free, then staged (purge order), then cached', () => {
    it.each([
      ['free blocks first: staged untouched', 2, [], []],
      ['staged before cached', 4, ['low'], []],
      ['lowest priority first, then the one due last', 6, ['low', 'late'], []],
      ['all staged before any cached block', 8, ['low', 'late', 'soon'], []],
      ['then cached, oldest first', 9, ['low', 'late', 'soon'], ['c0']],
    ] as const)('%s', (_name, n, purgedKeys, evictedKeys) => {
      const { sut, purged, evicted } = setup({ cached: 1 });
      sut.stage('soon', 2, rank({ priority: 1, dueMs: 100 }));
      sut.stage('late', 2, rank({ priority: 1, dueMs: 900 }));
      sut.stage('low', 2, rank({ priority: 0, dueMs: 100 }));
      // 1 free, 6 staged, 1 cached; allocations take one holder each.
      const got = sut.allocate(n - 1);
      expect(got).not.toBeNull();
      expect(purged).toEqual(purgedKeys);
      expect(evicted).toEqual(evictedKeys);
      sut.checkInvariant();
    });

    it("grouped: a sequence's group takes a purged chunk's blocks", () => {
      const { sut, purged } = setup({ grouped: true });
      sut.stage('a', 4, rank({ stamp: 1 }));
      sut.stage('b', 4, rank({ stamp: 2 }));
      expect(sut.numAvailable).toBe(8);
      expect(sut.allocateFor('seq', 3)).toHaveLength(3);
      expect(purged).toEqual(['a']);
      sut.checkInvariant();
    });

    it('availability counts staged blocks; more than available is still null, nothing purged', () => {
      const { sut, purged } = setup({ active: 4 });
      sut.stage('a', 4, rank());
      expect(sut.numAvailable).toBe(4);
      expect(sut.allocate(5)).toBeNull();
      expect(purged).toEqual([]);
      expect(sut.numStaged).toBe(4);
    });
  });

  describe('takeStaged and unstage', () => {
    it('a sequence takes a staged chunk over: held, unnamed, out of the staged set', () => {
      const { sut } = setup();
      const ids = sut.stage('x', 4, rank())!;
      expect(sut.takeStaged('x')).toEqual(ids);
      expect(ids.map((id) => sut.refCount(id))).toEqual([1, 1, 1, 1]);
      expect(sut.stagedIds('x')).toBeUndefined();
      expect(sut.counts()).toMatchObject({ staged: 0, active: 4 });
      sut.release(ids);
      expect(sut.numFree).toBe(8);
      sut.checkInvariant();
    });

    it('from block k on: the blocks before k go free', () => {
      const { sut } = setup();
      const ids = sut.stage('x', 4, rank())!;
      expect(sut.takeStaged('x', 3)).toEqual(ids.slice(3));
      expect(sut.counts()).toMatchObject({ free: 7, staged: 0, active: 1 });
      sut.checkInvariant();
    });

    it.each([
      ['blocks [1, 3): the others go free', 1, 3, null],
      ['an empty range', 2, 2, RangeError],
      ['past the chunk', 0, 5, RangeError],
    ] as const)('takeStaged of %s', (_name, from, to, error) => {
      const { sut } = setup();
      const ids = sut.stage('x', 4, rank())!;
      if (error) {
        expect(() => sut.takeStaged('x', from, to)).toThrow(error);
        expect(sut.stagedIds('x')).toEqual(ids);
      } else {
        expect(sut.takeStaged('x', from, to)).toEqual(ids.slice(from, to));
        expect(sut.counts()).toMatchObject({ free: 6, staged: 0, active: 2 });
      }
      sut.checkInvariant();
    });

    it('unstage frees the blocks; unknown keys change nothing', () => {
      const { sut, purged } = setup();
      sut.stage('x', 4, rank());
      expect(sut.unstage('y')).toBe(false);
      expect(sut.unstage('x')).toBe(true);
      expect(sut.unstage('x')).toBe(false);
      expect(sut.numFree).toBe(8);
      expect(purged).toEqual([]);
      expect(() => sut.takeStaged('x')).toThrow(/not staged/);
      sut.checkInvariant();
    });

    it('shrink drops a staged chunk reaching into the cut, whole', () => {
      const { sut, purged } = setup({ active: 4 });
      sut.stage('x', 4, rank());
      expect(sut.shrink(2)).toBe(true);
      expect(purged).toEqual(['x']);
      expect(sut.counts()).toMatchObject({ capacity: 6, free: 2, staged: 0, active: 4 });
      sut.checkInvariant();
    });
  });
});
