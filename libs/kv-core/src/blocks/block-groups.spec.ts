import { DeviceBlockManager } from './device-block.manager.js';
import { FreeRunIndex } from './free-run.index.js';
import { KvBlockLedger } from './kv-block.ledger.js';

/** Runs of consecutive ids in a block list: what one swap copy each would move. */
const runsOf = (ids: readonly number[]): number => ids.filter((id, i) => i === 0 || id !== ids[i - 1]! + 1).length;

describe('block groups', () => {
  describe(FreeRunIndex.name, () => {
    it.each([
      [
        'adjacent ranges merge',
        [
          [0, 4],
          [4, 8],
        ],
        [[0, 8]],
      ],
      [
        'a gap keeps two runs',
        [
          [0, 2],
          [5, 8],
        ],
        [
          [0, 2],
          [5, 8],
        ],
      ],
      [
        'a middle range joins both sides',
        [
          [0, 2],
          [5, 8],
          [2, 5],
        ],
        [[0, 8]],
      ],
      [
        'single ids coalesce',
        [
          [3, 4],
          [1, 2],
          [2, 3],
        ],
        [[1, 4]],
      ],
    ])('%s', (_name, adds, runs) => {
      const sut = new FreeRunIndex();
      sut.resize(8);
      for (const [a, b] of adds) sut.addRange(a!, b!);
      expect(sut.runs()).toEqual(runs);
    });

    it.each([
      ['splits a longer run, keeping its rest', [[0, 10]], 4, { start: 0, end: 4 }, [[4, 10]]],
      [
        'takes a run that surely fits over a first shorter one',
        [
          [0, 3],
          [4, 12],
        ],
        3,
        { start: 4, end: 7 },
        [
          [0, 3],
          [7, 12],
        ],
      ],
      [
        'none fits: the whole longest run',
        [
          [0, 2],
          [3, 6],
        ],
        8,
        { start: 3, end: 6 },
        [[0, 2]],
      ],
      ['empty → null', [], 1, null, []],
    ])('take: %s', (_name, adds, want, got, runs) => {
      const sut = new FreeRunIndex();
      sut.resize(12);
      for (const [a, b] of adds) sut.addRange(a!, b!);
      expect(sut.take(want)).toEqual(got);
      expect(sut.runs()).toEqual(runs);
    });

    it('remove splits a run and truncate cuts the id space', () => {
      const sut = new FreeRunIndex();
      sut.resize(10);
      sut.addRange(0, 10);
      sut.remove(4);
      expect(sut.runs()).toEqual([
        [0, 4],
        [5, 10],
      ]);
      sut.truncate(7);
      sut.resize(7);
      expect(sut.runs()).toEqual([
        [0, 4],
        [5, 7],
      ]);
      expect(sut.size).toBe(6);
    });
  });

  describe(DeviceBlockManager.name, () => {
    const grouped = (capacity: number, groupBlocks = 60) => new DeviceBlockManager(capacity, undefined, { groupBlocks });

    it.each([
      ['first group reserves groupBlocks', 200, [['a', 1]], { a: [0, 1, 60] }],
      [
        'a second owner starts after the first group',
        200,
        [
          ['a', 1],
          ['b', 1],
        ],
        { a: [0, 1, 60], b: [60, 61, 120] },
      ],
      [
        'an owner continues its own group',
        200,
        [
          ['a', 1],
          ['b', 1],
          ['a', 3],
        ],
        { a: [0, 4, 60] },
      ],
      ['grown to fit a larger allocation', 200, [['a', 100]], { a: [0, 100, 100] }],
      [
        'a group past the free runs is smaller',
        100,
        [
          ['a', 1],
          ['b', 1],
        ],
        { a: [0, 1, 60], b: [60, 61, 100] },
      ],
      [
        'no free run: steals the back half of the longest tail',
        100,
        [
          ['a', 1],
          ['b', 1],
          ['c', 1],
        ],
        { a: [0, 1, 30], b: [60, 61, 100], c: [30, 31, 60] },
      ],
      [
        'an exhausted group is followed by a new one',
        200,
        [
          ['a', 60],
          ['a', 1],
        ],
        { a: [60, 61, 120] },
      ],
    ])('%s', (_name, capacity, allocs, groups) => {
      const sut = grouped(capacity);
      for (const [owner, n] of allocs as Array<[string, number]>) expect(sut.allocateFor(owner, n)).toHaveLength(n);
      for (const [owner, [start, next, end]] of Object.entries(groups)) expect(sut.groupOf(owner)).toEqual({ start, next, end });
      sut.checkInvariant();
    });

    it('interleaved growth keeps each owner contiguous (one run per group)', () => {
      const sut = grouped(400, 60);
      const held: Record<string, number[]> = { a: [], b: [], c: [] };
      for (let step = 0; step < 50; step++) for (const o of ['a', 'b', 'c']) held[o]!.push(...sut.allocateFor(o, 1)!);
      for (const ids of Object.values(held)) expect(runsOf(ids)).toBe(1);
      sut.checkInvariant();
    });

    it('closing a group merges its tail back (buddy merge) so a later owner gets one long run', () => {
      const sut = grouped(120, 60);
      const a = sut.allocateFor('a', 10)!;
      const b = sut.allocateFor('b', 10)!;
      sut.release(a);
      sut.closeGroup('a');
      sut.release(b);
      sut.closeGroup('b');
      expect(sut.allocateFor('c', 120)).toEqual(Array.from({ length: 120 }, (_, i) => i));
      sut.checkInvariant();
    });

    it('all or nothing: more than available → null, nothing taken; cached blocks are reclaimed last', () => {
      const evicted: string[] = [];
      const sut = new DeviceBlockManager(4, (k) => evicted.push(k), { groupBlocks: 2 });
      const [x] = sut.allocateFor('a', 1)!;
      sut.commit(x!, 'k');
      sut.release([x!]);
      sut.closeGroup('a');
      expect(sut.allocateFor('b', 5)).toBeNull();
      expect(sut.numAvailable).toBe(4);
      expect(sut.allocateFor('b', 3)).toHaveLength(3);
      expect(evicted).toEqual([]);
      expect(sut.allocateFor('c', 1)).toEqual([x]);
      expect(evicted).toEqual(['k']);
      sut.checkInvariant();
    });

    it('shrink clips reservations and grow adds a free run', () => {
      const sut = grouped(100, 60);
      sut.allocateFor('a', 1);
      expect(sut.shrink(50)).toBe(true);
      expect(sut.groupOf('a')).toEqual({ start: 0, next: 1, end: 50 });
      sut.checkInvariant();
      sut.grow(30);
      sut.checkInvariant();
      expect(sut.allocateFor('b', 30)).toEqual(Array.from({ length: 30 }, (_, i) => 50 + i));
    });

    it('stays consistent under a long random mix, prefix sharing included', () => {
      let x = 777;
      const rnd = (n: number) => (x = (x * 1103515245 + 12345) >>> 0) % n;
      const sut = grouped(64, 8);
      const held = new Map<string, number[]>();
      for (let i = 0; i < 6000; i++) {
        const owner = `s${rnd(6)}`;
        const op = rnd(6);
        if (op <= 1) {
          const ids = sut.allocateFor(owner, rnd(4));
          if (ids) held.set(owner, [...(held.get(owner) ?? []), ...ids]);
        } else if (op === 2 && held.has(owner)) {
          sut.release(held.get(owner)!);
          sut.closeGroup(owner);
          held.delete(owner);
        } else if (op === 3 && held.get(owner)?.length) {
          const ids = held.get(owner)!;
          const id = ids[rnd(ids.length)]!;
          if (sut.keyOf(id) === undefined) sut.commit(id, `k${rnd(30)}`);
        } else if (op === 4) {
          const ids = sut.match([`k${rnd(30)}`]);
          sut.acquire(ids);
          held.set(owner, [...(held.get(owner) ?? []), ...ids]);
        } else if (op === 5) sut.evict(rnd(2));
        if (i % 53 === 0) sut.checkInvariant();
      }
      sut.checkInvariant();
      expect(sut.numActive).toBe(new Set([...held.values()].flat()).size);
    });
  });

  describe(KvBlockLedger.name, () => {
    it('grouped sequences get contiguous blocks and still share cached prefixes', () => {
      const sut = new KvBlockLedger('m', 256, undefined, { groupBlocks: 60 });
      const tokens = Array.from({ length: 64 }, (_, i) => i);
      sut.open('a', 't');
      sut.append([{ seqId: 'a', tokens: 64, ids: tokens }]);
      sut.commit(['a']);
      sut.open('b', 't');
      expect(sut.attachPrefix('b', [...tokens, 99])).toBe(64);
      expect(sut.blockIds('b')).toEqual(sut.blockIds('a'));
      sut.open('c');
      for (let i = 0; i < 20; i++) {
        sut.append([{ seqId: 'c', tokens: 16 }]);
        sut.append([{ seqId: 'b', tokens: 16, ids: Array(16).fill(7) }]);
      }
      expect(runsOf(sut.blockIds('c'))).toBe(1);
      expect(runsOf(sut.blockIds('b').slice(4))).toBe(1);
      sut.release('a');
      sut.release('b');
      sut.release('c');
      sut.blocks.checkInvariant();
      expect(sut.blocks.numActive).toBe(0);
    });
  });
});
