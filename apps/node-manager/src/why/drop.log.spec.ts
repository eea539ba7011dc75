import { DropLog } from './drop.log.js';

describe('DropLog: why a chunk left a tier', () => {
  it.each([
    ['an eviction', undefined, 'ssd', false, 'evicted'],
    ['a cut back by the tier', undefined, 'ssd', true, 'truncated'],
    ['an expiry the store told of', 'expired', 'ssd', false, 'expired'],
    ['a corrupt copy dropped whole', 'corrupt', 'ssd', false, 'corrupt'],
    ['a corrupt later layer (the tier keeps the layers before it)', 'corrupt', 'host', true, 'corrupt'],
  ] as const)('%s', (_name, told, tier, truncated, reason) => {
    const sut = new DropLog(100, 60_000, () => 1000);
    if (told) sut.because('k', tier, told);
    sut.removed('k', tier, truncated);
    expect(sut.get('k')).toEqual([expect.objectContaining({ reason, tier, atUnixMs: 1000 })]);
    // What the store said applies to that removal only.
    sut.removed('k', tier, false);
    expect(sut.get('k')[0]!.reason).toBe('evicted');
  });
});
