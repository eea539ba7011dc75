import type { DeviceWrite } from './offload.planner.js';
import { splitWrites } from './write.split.js';

const STRIDE = 4096;
const write = (deviceIndex: number, n: number, at = 0, slack = 0): DeviceWrite<string> => ({
  deviceIndex,
  type: 'mem',
  segments: Array.from({ length: n }, (_, i) => `d${deviceIndex}s${i}`),
  offsets: Array.from({ length: n }, (_, i) => at + i * STRIDE),
  extents: [{ offset: at, length: n * STRIDE + slack }],
});

describe(splitWrites.name, () => {
  it.each([
    ['one device, 5 segments by 2', [write(0, 5)], 2, [[2], [2], [1]], undefined],
    ['two devices of 3 and 1 segments by 2', [write(0, 3), write(1, 1, 1 << 20)], 2, [[2, 1], [1]], undefined],
    ['parts as large as the plan', [write(0, 4)], 64, [[4]], undefined],
    ['max 0: one part', [write(0, 4)], 0, [[4]], 1],
    ['an extent with slack: one part', [write(0, 4, 0, STRIDE)], 2, [[4]], 1],
    ['a smaller first part', [write(0, 9)], 4, [[1], [4], [4]], 1],
    ['a smaller first part on two devices', [write(0, 7), write(1, 2, 1 << 20)], 4, [[2, 2], [4], [1]], 2],
    ['a first part larger than max is max', [write(0, 5)], 2, [[2], [2], [1]], 8],
    ['a first part of 0 is one segment', [write(0, 3)], 2, [[1], [2]], 0],
  ])('%s', (_name, writes, max, sizes, first: number | undefined) => {
    const parts = splitWrites(writes, max, STRIDE, first);
    expect(parts.map((p) => p.map((w) => w.segments.length))).toEqual(sizes);
    // Every segment once, in plan order per device, at its planned offset.
    for (const w of writes) {
      const mine = parts.flatMap((p) => p.filter((x) => x.deviceIndex === w.deviceIndex));
      expect(mine.flatMap((x) => x.segments)).toEqual(w.segments);
      expect(mine.flatMap((x) => x.offsets)).toEqual(w.offsets);
    }
    // A split part's extents are exactly its own segments' strides (freed alone if it fails).
    if (parts.length > 1) for (const x of parts.flat()) expect(x.extents).toEqual(x.offsets.map((offset) => ({ offset, length: STRIDE })));
  });
});
