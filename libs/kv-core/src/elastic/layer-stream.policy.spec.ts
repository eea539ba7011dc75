import { layerStreamLimit, planStreamStart, routeContext, streamPlaneBlocks } from './layer-stream.policy.js';

const tiny = { layers: 4, window: 2 };
const small = { layers: 6, window: 2 };

describe('layer stream policy', () => {
  it.each([
    ['half the layers resident: half a block per block', tiny, 10, 5],
    ['rounded up', tiny, 11, 6],
    ['a third of the layers', small, 9, 3],
    ['one block still needs a whole plane block', small, 1, 1],
  ])('streamPlaneBlocks: %s', (_n, shape, c, expected) => {
    expect(streamPlaneBlocks(shape, c)).toBe(expected);
  });

  it.each([
    // name, shape, device, host, limit
    ['device only: C + C/2 ≤ 8', tiny, 8, 0, 5],
    ['host pool behind it: C + ⌈C/2⌉ ≤ 8 + 8', tiny, 8, 8, 10],
    ['planes must fit the device: ⌈C/2⌉ ≤ 8 even with a huge host pool', tiny, 8, 10_000, 16],
    ['window 2 of 6 layers', small, 12, 0, 9],
    ['no device memory: nothing streams', tiny, 0, 100, 0],
    ['one device block: one plane block and one host block', tiny, 1, 1, 1],
  ])('layerStreamLimit: %s', (_n, shape, device, host, limit) => {
    expect(layerStreamLimit(shape, device, host)).toBe(limit);
    if (limit > 0) {
      expect(planStreamStart(shape, limit, device, host)).not.toBeNull();
      expect(planStreamStart(shape, limit + 1, device, host)).toBeNull();
    }
  });

  it.each([
    ['fits the device', 8, 8, 20, 'device'],
    ['over the device, within the stream', 9, 8, 20, 'stream'],
    ['at the stream limit', 20, 8, 20, 'stream'],
    ['over both', 21, 8, 20, null],
    ['stream off (limit 0)', 9, 8, 0, null],
  ])('routeContext: %s', (_n, need, device, stream, route) => {
    expect(routeContext(need, device, stream)).toBe(route);
  });

  it.each([
    // name, context, free device, free host, plan
    ['all on the device', 4, 10, 0, { planeBlocks: 2, deviceBacking: 4, hostBacking: 0 }],
    ['device first, the rest on the host', 10, 8, 16, { planeBlocks: 5, deviceBacking: 3, hostBacking: 7 }],
    ['planes take the whole device: every block on the host', 10, 5, 10, { planeBlocks: 5, deviceBacking: 0, hostBacking: 10 }],
    ['planes do not fit yet', 10, 4, 100, null],
    ['host pool too small', 10, 8, 6, null],
  ])('planStreamStart: %s', (_n, c, device, host, plan) => {
    expect(planStreamStart(tiny, c, device, host)).toEqual(plan);
  });

  it.each([
    ['window 1 cannot overlap', { layers: 4, window: 1 }],
    ['window beyond the layers', { layers: 4, window: 5 }],
  ])('rejects %s', (_n, shape) => {
    expect(() => layerStreamLimit(shape, 8, 8)).toThrow(RangeError);
  });

  it('rejects an empty context', () => {
    expect(() => planStreamStart(tiny, 0, 8, 8)).toThrow(RangeError);
  });
});
