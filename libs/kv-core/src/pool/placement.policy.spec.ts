import { interleave, placeCounts, placeSegments, placementRatios, targetCounts, type PlacementDevice } from './placement.policy.js';

interface Seg {
  position: number;
  layer: number;
}

/** Layer-wise enumeration of `chunks` chunks starting at `first`: layer 0 of each, then layer 1, … */
function layerWise(first: number, chunks: number, layers: number): Seg[] {
  const out: Seg[] = [];
  for (let layer = 0; layer < layers; layer++) for (let c = 0; c < chunks; c++) out.push({ position: first + c, layer });
  return out;
}

/** segments[layer][device] = how many of that layer's segments a device holds. */
function perLayer(sets: Seg[][], layers: number): number[][] {
  const out = Array.from({ length: layers }, () => sets.map(() => 0));
  sets.forEach((set, d) => set.forEach((s) => out[s.layer]![d]!++));
  return out;
}

describe(placementRatios.name, () => {
  it.each([
    ['3:1', [3, 1], [0.75, 0.25]],
    ['a device without bandwidth', [0, 5], [0, 1]],
    ['no bandwidth anywhere', [0, 0], [0, 0]],
    ['no devices', [], []],
    ['equal devices', [2, 2, 2, 2], [0.25, 0.25, 0.25, 0.25]],
  ])('%s', (_name, bandwidths, expected) => {
    expect(placementRatios(bandwidths)).toEqual(expected);
  });

  it.each([[[-1, 1]], [[NaN]], [[Infinity, 1]]])('rejects bandwidths %p', (bandwidths) => {
    expect(() => placementRatios(bandwidths)).toThrow(RangeError);
  });
});

describe(targetCounts.name, () => {
  const cases: Array<[string, number[], number, number[]]> = [
    ['3:1 divides evenly', [3, 1], 8, [6, 2]],
    ['3:1 remainder goes to the larger p', [3, 1], 7, [6, 1]],
    ['equal ratios: remainder ties go to the lower index', [1, 1, 1], 4, [2, 1, 1]],
    ['remainder to the largest p, not the first', [1, 2, 1], 5, [1, 3, 1]],
    ['remainder of 2 goes one apiece to the two largest', [5, 3, 2], 3, [2, 1, 0]],
    ['zero bandwidth gets nothing, even from the remainder', [3, 0, 1], 5, [4, 0, 1]],
    ['one segment', [1, 1], 1, [1, 0]],
    ['nothing to place', [3, 1], 0, [0, 0]],
    ['no bandwidth anywhere', [0, 0], 4, [0, 0]],
    ['measured, non-integer bandwidths', [12.3, 4.1], 32, [24, 8]],
    ['very unequal', [1000, 1], 10, [10, 0]],
  ];
  it.each(cases)('%s', (_name, bandwidths, n, expected) => {
    const counts = targetCounts(bandwidths, n);
    expect(counts).toEqual(expected);
    if (bandwidths.some((b) => b > 0)) expect(counts.reduce((s, c) => s + c, 0)).toBe(n);
  });

  it.each([-1, 1.5, NaN])('rejects segment count %p', (n) => {
    expect(() => targetCounts([1], n)).toThrow(RangeError);
  });
});

describe(placeCounts.name, () => {
  const cases: Array<[string, PlacementDevice[], number, number[], number]> = [
    ['unbounded devices follow Eq. 2', [{ bandwidth: 3 }, { bandwidth: 1 }], 8, [6, 2], 0],
    [
      'a full device is skipped and the rest re-normalise',
      [{ bandwidth: 3, room: 0 }, { bandwidth: 1 }, { bandwidth: 1 }],
      4,
      [0, 2, 2],
      0,
    ],
    ['a device short of its share gets its room, the overflow moves', [{ bandwidth: 3, room: 2 }, { bandwidth: 1 }], 8, [2, 6], 0],
    ['overflow re-spreads in ratio over the others', [{ bandwidth: 2, room: 1 }, { bandwidth: 3 }, { bandwidth: 1 }], 9, [1, 6, 2], 0],
    [
      'more than all rooms: the rest is unplaced',
      [
        { bandwidth: 3, room: 2 },
        { bandwidth: 1, room: 1 },
      ],
      8,
      [2, 1],
      5,
    ],
    [
      'every device full',
      [
        { bandwidth: 1, room: 0 },
        { bandwidth: 1, room: 0 },
      ],
      3,
      [0, 0],
      3,
    ],
    [
      'zero bandwidth with room still gets nothing',
      [
        { bandwidth: 0, room: 10 },
        { bandwidth: 1, room: 2 },
      ],
      4,
      [0, 2],
      2,
    ],
    ['no devices', [], 2, [], 2],
  ];
  it.each(cases)('%s', (_name, devices, n, counts, unplaced) => {
    expect(placeCounts(devices, n)).toEqual({ counts, unplaced });
  });

  it('rejects a fractional room', () => {
    expect(() => placeCounts([{ bandwidth: 1, room: 0.5 }], 1)).toThrow(RangeError);
  });
});

describe(interleave.name, () => {
  const A = 0;
  const B = 1;
  const C = 2;
  it.each([
    ['3:1', [3, 1], 0, [A, A, B, A]],
    ['3:1 twice over', [6, 2], 0, [A, A, B, A, A, A, B, A]],
    ['rotated by one', [3, 1], 1, [A, B, A, A]],
    ['rotation wraps', [3, 1], 5, [A, B, A, A]],
    ['equal weights alternate', [2, 2], 0, [A, B, A, B]],
    ['a device with count 0 never appears', [2, 0, 1], 0, [A, C, A]],
    ['nothing to deal', [0, 0], 3, []],
  ])('%s', (_name, counts, rotation, expected) => {
    expect([...interleave(counts, rotation)]).toEqual(expected);
  });

  it.each([[[5, 3, 2]], [[7, 1]], [[1, 1, 1, 1, 13]], [[24, 8]]])('deals each device exactly its count: %p', (counts) => {
    const seq = interleave(counts);
    expect(counts.map((_, d) => seq.filter((x) => x === d).length)).toEqual(counts);
  });
});

describe(placeSegments.name, () => {
  const twoToOne: PlacementDevice[] = [{ bandwidth: 3 }, { bandwidth: 1 }];

  it('3:1 bandwidth: 3:1 counts overall and every layer is read from both devices in ratio', () => {
    const layers = 4;
    const sut = placeSegments(layerWise(0, 8, layers), twoToOne);
    expect(sut.counts).toEqual([24, 8]);
    expect(sut.sets.map((s) => s.length)).toEqual([24, 8]);
    expect(perLayer(sut.sets, layers)).toEqual([
      [6, 2],
      [6, 2],
      [6, 2],
      [6, 2],
    ]);
    expect(sut.unplaced).toEqual([]);
  });

  it('one chunk per batch at consecutive positions: each layer still splits 3:1 across the prefix', () => {
    const layers = 4;
    const sets: Seg[][] = [[], []];
    for (let position = 0; position < 8; position++) {
      const batch = placeSegments(layerWise(position, 1, layers), twoToOne);
      expect(batch.counts).toEqual([3, 1]);
      batch.sets.forEach((set, d) => sets[d]!.push(...set));
    }
    expect(perLayer(sets, layers)).toEqual([
      [6, 2],
      [6, 2],
      [6, 2],
      [6, 2],
    ]);
  });

  it('keeps the layer-wise order inside each set (one contiguous write per device)', () => {
    const sut = placeSegments(layerWise(0, 4, 2), twoToOne);
    for (const set of sut.sets) {
      const keys = set.map((s) => s.layer * 100 + s.position);
      expect(keys).toEqual([...keys].sort((a, b) => a - b));
    }
    expect(
      sut.sets
        .flat()
        .map((s) => `${s.layer}:${s.position}`)
        .sort(),
    ).toEqual(
      layerWise(0, 4, 2)
        .map((s) => `${s.layer}:${s.position}`)
        .sort(),
    );
  });

  it('skips a full device and a device without bandwidth', () => {
    const sut = placeSegments(layerWise(0, 2, 2), [{ bandwidth: 5, room: 0 }, { bandwidth: 0 }, { bandwidth: 1 }]);
    expect(sut.sets.map((s) => s.length)).toEqual([0, 0, 4]);
  });

  it('leaves the latest layers unplaced when the devices run out of room', () => {
    const segs = layerWise(0, 2, 3);
    const sut = placeSegments(segs, [
      { bandwidth: 1, room: 2 },
      { bandwidth: 1, room: 2 },
    ]);
    expect(sut.counts).toEqual([2, 2]);
    expect(sut.unplaced).toEqual(segs.slice(4));
    expect(sut.unplaced.every((s) => s.layer === 2)).toBe(true);
  });

  it('places an empty batch as nothing', () => {
    expect(placeSegments([], twoToOne)).toEqual({ sets: [[], []], counts: [0, 0], unplaced: [] });
  });

  it('rejects a segment without a valid chunk position', () => {
    expect(() => placeSegments([{ position: -1 }], twoToOne)).toThrow(RangeError);
  });
});
