import { LinkSpeed } from './link.speed.js';

describe(LinkSpeed.name, () => {
  const MB = 1e6;
  it.each<[string, Array<[number, number]>, number, number]>([
    ['nothing measured: the prior (200 MB/s), 4 MB → 500 + 4·20 ms', [], 4 * MB, 580],
    [
      'a fast link measured (1 GB/s, eight samples in): shorter',
      [
        [4 * MB, 4],
        [4 * MB, 4],
        [4 * MB, 4],
        [4 * MB, 4],
        [4 * MB, 4],
        [4 * MB, 4],
        [4 * MB, 4],
        [4 * MB, 4],
      ],
      4 * MB,
      517,
    ],
    [
      'a slow link measured (20 MB/s, twelve samples in): longer',
      Array.from({ length: 12 }, () => [2 * MB, 100] as [number, number]),
      4 * MB,
      1212,
    ],
    [
      'latency-bound samples (under 64 KiB) say nothing of bandwidth',
      [
        [1000, 50],
        [2000, 80],
      ],
      4 * MB,
      580,
    ],
    ['an empty chunk gets the fixed part only', [], 0, 500],
    [
      'nonsense samples are ignored',
      [
        [NaN, 5],
        [4 * MB, 0],
        [4 * MB, -3],
      ],
      4 * MB,
      580,
    ],
  ])('%s', (_name, samples, bytes, ms) => {
    const sut = new LinkSpeed();
    for (const [b, t] of samples) sut.observe({ bytes: b, ms: t });
    expect(sut.deadlineMs(bytes)).toBe(ms);
  });

  it('takes its fixed part, slack and prior from the options', () => {
    expect(new LinkSpeed({ baseMs: 100, slack: 2, priorBytesPerSec: 1e9 }).deadlineMs(10 * MB)).toBe(120);
  });
});
