import { ExtentAllocator } from './extent.allocator.js';
import type { Extent } from './pool.types.js';
import { seeded } from '../testing/seeded.random.js';

const U = 4096;

/** An allocator of `units` sectors with the given [start, end) unit ranges used. */
function withUsed(units: number, used: Array<[number, number]>): ExtentAllocator {
  const sut = new ExtentAllocator(units * U, U);
  for (const [s, e] of used) sut.reserve(s * U, (e - s) * U);
  return sut;
}

const inUnits = (extents: Extent[]): Array<[number, number]> => extents.map((e) => [e.offset / U, (e.offset + e.length) / U]);

describe(ExtentAllocator.name, () => {
  describe('allocate', () => {
    // Free holes of 3, 1 and 2 units at 1–4, 5–6 and 7–9 (units 0, 4, 6, 9 used).
    const holes: Array<[number, number]> = [
      [0, 1],
      [4, 5],
      [6, 7],
      [9, 10],
    ];
    const cases: Array<[string, Array<[number, number]>, number, number | null]> = [
      ['fresh device starts at 0', [], 2 * U, 0],
      ['rounds a partial sector up', [], 1, 0],
      ['best fit: the 2-unit hole for 2 units, not the first (3-unit) hole', holes, 2 * U, 7 * U],
      ['best fit: the 1-unit hole for 1 unit', holes, U, 5 * U],
      ['equal fits: the lowest offset wins', [[2, 3]], 2 * U, 0],
      ['exact fit of the largest hole', holes, 3 * U, U],
      ['nothing large enough → null', holes, 4 * U, null],
    ];
    it.each(cases)('%s', (_name, used, bytes, expected) => {
      const sut = withUsed(10, used);
      const before = sut.freeExtents();
      const got = sut.allocate(bytes);
      expect(got).toBe(expected);
      if (got === null) expect(sut.freeExtents()).toEqual(before);
      else expect(sut.isFree(got, bytes)).toBe(false);
      sut.checkInvariant();
    });

    it('returns null on a device with no space at all', () => {
      const sut = new ExtentAllocator(U - 1, U);
      expect(sut.stats().capacity).toBe(0);
      expect(sut.allocate(1)).toBeNull();
    });

    it.each([0, -U, 1.5, NaN])('rejects size %p', (bytes) => {
      expect(() => new ExtentAllocator(4 * U, U).allocate(bytes)).toThrow(RangeError);
    });
  });

  describe('free', () => {
    const cases: Array<[string, Array<[number, number]>, [number, number], Array<[number, number]>]> = [
      ['no free neighbour: a new extent', [[0, 10]], [4, 5], [[4, 5]]],
      ['joins the extent before', [[4, 10]], [4, 5], [[0, 5]]],
      ['joins the extent after', [[0, 5]], [4, 5], [[4, 10]]],
      ['joins both neighbours into one', [[4, 5]], [4, 5], [[0, 10]]],
      ['the whole device', [[0, 10]], [0, 10], [[0, 10]]],
    ];
    it.each(cases)('%s', (_name, used, [s, e], expected) => {
      const sut = withUsed(10, used);
      sut.free(s * U, (e - s) * U);
      expect(inUnits(sut.freeExtents())).toEqual(expected);
      sut.checkInvariant();
    });

    it('frees one segment out of a batch extent', () => {
      const sut = new ExtentAllocator(8 * U, U);
      const [ext] = sut.allocateBatch(4, U)!;
      sut.free(ext!.offset + U, U);
      expect(inUnits(sut.freeExtents())).toEqual([
        [1, 2],
        [4, 8],
      ]);
      sut.checkInvariant();
    });

    const broken: Array<[string, [number, number], RegExp | typeof RangeError]> = [
      ['double free of a free extent', [6, 7], /double free/],
      ['overlaps the free extent before', [7, 9], /double free/],
      ['overlaps the free extent after', [5, 7], /double free/],
      ['swallows a free extent', [2, 9], /double free/],
      ['beyond capacity', [9, 11], RangeError],
      ['misaligned offset', [0.5, 1], RangeError],
    ];
    it.each(broken)('throws on %s and changes nothing', (_name, [s, e], error) => {
      const sut = withUsed(10, [
        [0, 6],
        [8, 10],
      ]);
      const before = sut.freeExtents();
      expect(() => sut.free(s * U, (e - s) * U)).toThrow(error);
      expect(sut.freeExtents()).toEqual(before);
      sut.checkInvariant();
    });
  });

  describe('reserve', () => {
    it.each([
      [
        'the middle of an extent splits it',
        [3, 5],
        [
          [0, 3],
          [5, 10],
        ],
      ],
      ['the start', [0, 2], [[2, 10]]],
      ['the end', [8, 10], [[0, 8]]],
      ['all of it', [0, 10], []],
    ] as Array<[string, [number, number], Array<[number, number]>]>)('%s', (_name, [s, e], expected) => {
      const sut = new ExtentAllocator(10 * U, U);
      sut.reserve(s * U, (e - s) * U);
      expect(inUnits(sut.freeExtents())).toEqual(expected);
      expect(sut.freeBytes).toBe((10 - (e - s)) * U);
      sut.checkInvariant();
    });

    it.each([
      ['used space', [1, 2]],
      ['partly used space', [2, 4]],
    ] as Array<[string, [number, number]]>)('throws on a reserve of %s and changes nothing', (_name, [s, e]) => {
      const sut = withUsed(10, [[0, 3]]);
      const before = sut.freeExtents();
      expect(() => sut.reserve(s * U, (e - s) * U)).toThrow(/used space/);
      expect(sut.freeExtents()).toEqual(before);
    });
  });

  describe('allocateBatch', () => {
    const cases: Array<[string, Array<[number, number]>, number, Array<[number, number]> | null]> = [
      ['one contiguous extent when one fits', [], 4, [[0, 4]]],
      ['best fit for the whole batch', [[3, 4]], 3, [[0, 3]]],
      [
        'fragmented: several extents, largest first',
        [
          [3, 4],
          [6, 7],
        ],
        6,
        [
          [7, 10],
          [0, 3],
        ],
      ],
      [
        'takes only what it needs from the last extent',
        [
          [3, 4],
          [6, 7],
        ],
        5,
        [
          [7, 10],
          [0, 2],
        ],
      ],
      [
        'does not fit → null',
        [
          [3, 4],
          [6, 7],
        ],
        9,
        null,
      ],
      ['zero segments', [], 0, []],
    ];
    it.each(cases)('%s', (_name, used, count, expected) => {
      const sut = withUsed(10, used);
      const before = sut.freeBytes;
      const got = sut.allocateBatch(count, U);
      expect(got && inUnits(got)).toEqual(expected);
      expect(sut.freeBytes).toBe(got ? before - count * U : before);
      sut.checkInvariant();
    });

    it('only uses whole strides of each extent', () => {
      // Holes of 3 and 5 units; a 2-unit stride fits 1 + 2 segments, not 4.
      const sut = withUsed(10, [[3, 5]]);
      expect(sut.fitCount(2 * U)).toBe(3);
      expect(sut.allocateBatch(4, 2 * U)).toBeNull();
      expect(inUnits(sut.allocateBatch(3, 2 * U)!)).toEqual([
        [5, 9],
        [0, 2],
      ]);
      sut.checkInvariant();
    });

    it.each([0, U / 2, 1.5 * U])('rejects stride %p (not a positive multiple of the alignment)', (stride) => {
      expect(() => new ExtentAllocator(10 * U, U).allocateBatch(1, stride)).toThrow(RangeError);
    });
  });

  it('reports stats and fragmentation', () => {
    const sut = withUsed(10, [
      [2, 3],
      [5, 6],
    ]);
    expect(sut.stats()).toEqual({
      capacity: 10 * U,
      freeBytes: 8 * U,
      usedBytes: 2 * U,
      largestFree: 4 * U,
      freeExtents: 3,
      fragmentation: 0.5,
    });
    expect(new ExtentAllocator(0, U).stats().fragmentation).toBe(0);
  });

  it('rounds capacity down to the alignment and answers isFree for out-of-range input', () => {
    const sut = new ExtentAllocator(10 * U + 100, U);
    expect(sut.capacity).toBe(10 * U);
    expect(sut.isFree(9 * U, U)).toBe(true);
    expect(sut.isFree(10 * U, U)).toBe(false);
    expect(sut.isFree(3, U)).toBe(false);
    expect(() => new ExtentAllocator(10, 0)).toThrow(RangeError);
  });

  it('agrees with a per-unit model through a seeded random workload', () => {
    const units = 256;
    const rand = seeded(99);
    const sut = new ExtentAllocator(units * U, U);
    const used = new Uint8Array(units);
    const held: Array<[number, number]> = [];
    const bestFit = (n: number): number | null => {
      let best: [number, number] | null = null;
      for (let s = 0; s < units;) {
        if (used[s]) {
          s++;
          continue;
        }
        let e = s;
        while (e < units && !used[e]) e++;
        if (e - s >= n && (!best || e - s < best[1])) best = [s, e - s];
        s = e;
      }
      return best && best[0];
    };
    for (let step = 0; step < 3000; step++) {
      if (rand(2) === 0 || held.length === 0) {
        const n = 1 + rand(12);
        const got = sut.allocate(n * U);
        const want = bestFit(n);
        expect(got === null ? null : got / U).toBe(want);
        if (got !== null) {
          used.fill(1, got / U, got / U + n);
          held.push([got / U, n]);
        }
      } else {
        const [s, n] = held.splice(rand(held.length), 1)[0]!;
        // Free a random sub-range of the allocation, keep the rest held.
        const a = rand(n);
        const b = a + 1 + rand(n - a);
        sut.free((s + a) * U, (b - a) * U);
        used.fill(0, s + a, s + b);
        if (a > 0) held.push([s, a]);
        if (b < n) held.push([s + b, n - b]);
      }
      expect(sut.freeBytes).toBe(used.reduce((z, x) => z + (x ? 0 : 1), 0) * U);
    }
    sut.checkInvariant();
  });
});
