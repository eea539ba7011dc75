import { ExtentAllocator } from './extent.allocator.js';
import { planOffload, type OffloadDevice } from './offload.planner.js';

const U = 4096;

interface Seg {
  position: number;
  layer: number;
}

function layerWise(chunks: number, layers: number): Seg[] {
  const out: Seg[] = [];
  for (let layer = 0; layer < layers; layer++) for (let position = 0; position < chunks; position++) out.push({ position, layer });
  return out;
}

function device(deviceIndex: number, bandwidth: number, units: number, used: Array<[number, number]> = []): OffloadDevice {
  const allocator = new ExtentAllocator(units * U, U);
  for (const [s, e] of used) allocator.reserve(s * U, (e - s) * U);
  return { deviceIndex, type: 'ssd', bandwidth, allocator };
}

describe(planOffload.name, () => {
  it('3:1 devices: one contiguous extent each, split 3:1, offsets one stride apart', () => {
    const devices = [device(0, 3, 64), device(1, 1, 64)];
    const plan = planOffload(layerWise(8, 4), devices, 2 * U);
    expect(plan.writes.map((w) => [w.deviceIndex, w.segments.length, w.extents.length])).toEqual([
      [0, 24, 1],
      [1, 8, 1],
    ]);
    expect(plan.writes[0]!.offsets.slice(0, 3)).toEqual([0, 2 * U, 4 * U]);
    expect(plan.writes[1]!.extents).toEqual([{ offset: 0, length: 16 * U }]);
    expect(plan.unplaced).toEqual([]);
    expect(devices.map((d) => d.allocator.stats().usedBytes / U)).toEqual([48, 16]);
  });

  it('re-places when fragmentation makes a device hold less than its free bytes suggest', () => {
    // Device 0 has 3 free units but no 2-unit hole: its estimated room (1) is really 0.
    const frag = device(0, 100, 6, [
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    const other = device(1, 1, 16);
    const plan = planOffload(layerWise(2, 2), [frag, other], 2 * U);
    expect(plan.writes.map((w) => [w.deviceIndex, w.segments.length])).toEqual([[1, 4]]);
    expect(frag.allocator.freeBytes).toBe(3 * U);
    frag.allocator.checkInvariant();
  });

  it('splits a device share over several extents when no single one holds it', () => {
    const d = device(0, 1, 10, [[3, 4]]);
    const plan = planOffload(layerWise(4, 1), [d], 2 * U);
    expect(plan.writes[0]!.extents).toEqual([
      { offset: 4 * U, length: 6 * U },
      { offset: 0, length: 2 * U },
    ]);
    expect(plan.writes[0]!.offsets).toEqual([4 * U, 6 * U, 8 * U, 0]);
  });

  it('returns what does not fit as unplaced, allocating only what does', () => {
    const devices = [device(0, 1, 4), device(1, 1, 2)];
    const segs = layerWise(2, 4);
    const plan = planOffload(segs, devices, 2 * U);
    expect(plan.writes.map((w) => w.segments.length)).toEqual([2, 1]);
    expect(plan.unplaced).toEqual(segs.slice(3));
    expect(devices.map((d) => d.allocator.freeBytes)).toEqual([0, 0]);
  });

  it('plans nothing onto full devices', () => {
    const devices = [device(0, 1, 4, [[0, 4]])];
    expect(planOffload(layerWise(1, 2), devices, U)).toEqual({ writes: [], unplaced: layerWise(1, 2) });
  });

  it.each([
    ['a stride that is not a multiple of the alignment', [device(0, 1, 8)], U + 512],
    ['a device listed twice', [device(0, 1, 8), device(0, 1, 8)], U],
  ])('rejects %s before allocating anything', (_name, devices, stride) => {
    expect(() => planOffload(layerWise(1, 2), devices, stride)).toThrow(RangeError);
    expect(devices.every((d) => d.allocator.stats().usedBytes === 0)).toBe(true);
  });
});
