import { RestoreCounters } from './restore.counters.js';

describe(RestoreCounters.name, () => {
  it.each<[string, boolean, number | undefined, Partial<RestoreCounters>]>([
    [
      'a restore that worked: its tokens by tier and its blocked time',
      true,
      3,
      { restoredTokens: 512, hitTokens: { mem: 256, ssd: 256 }, failures: 0, blockedMs: 3 },
    ],
    [
      'a restore that failed: a failure, no tokens, its blocked time',
      false,
      3,
      { restoredTokens: 0, hitTokens: { mem: 0, ssd: 0 }, failures: 1, blockedMs: 3 },
    ],
    ['no blocked time reported: none counted', true, undefined, { restoredTokens: 512, failures: 0, blockedMs: 0 }],
  ])('%s', (_name, ok, blockedMs, want) => {
    const sut = new RestoreCounters();
    sut.ended(ok, 512, { mem: 256, ssd: 256 }, blockedMs);
    expect(sut).toMatchObject({ plans: 0, ...want });
  });

  it('adds up over restores', () => {
    const sut = new RestoreCounters();
    sut.ended(true, 256, { mem: 256, ssd: 0 }, 1);
    sut.ended(true, 512, { mem: 0, ssd: 512 }, 2);
    sut.ended(false, 256, { mem: 256, ssd: 0 }, 4);
    expect(sut).toMatchObject({ restoredTokens: 768, hitTokens: { mem: 256, ssd: 512 }, failures: 1, blockedMs: 7 });
  });
});
