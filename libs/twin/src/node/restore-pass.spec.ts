import { restorePass, type PassLoad } from './restore-pass.js';

/** 512 restored positions (2 chunks) whose every layer load takes `loadMs` from when it is asked for. */
const loads = (loadMs: number): PassLoad[] => [{ from: 0, until: 512, load: (_layer, at) => at + loadMs }];

describe(restorePass.name, () => {
  // The sim engine's own table (libs/engine sim-kv.engine.spec.ts, "overlap of loads with the
  // modelled compute"): 4 layers of 40 ms compute; the twin's pass must give the same times.
  it.each<[string, number, number, { blockedMs: number; end: number }]>([
    ['loads shorter than a layer of compute block only the first layer', 5, 0, { blockedMs: 5, end: 5 + 160 }],
    ['loads outlasting the compute they overlap', 90, 0, { blockedMs: 90 + 3 * 50, end: 4 * 90 + 40 }],
    ['loads of exactly a layer of compute', 40, 0, { blockedMs: 40, end: 40 + 160 }],
    ['a link faster than compute blocks only the first layer', 0, 20, { blockedMs: 10, end: 10 + 160 }],
    ['a link slower than compute blocks like slow loads', 0, 180, { blockedMs: 90 + 3 * 50, end: 4 * 90 + 40 }],
    ['the later of the real load and the link sets each arrival', 90, 20, { blockedMs: 90 + 3 * 50, end: 4 * 90 + 40 }],
    ['instant loads and a free link', 0, 0, { blockedMs: 0, end: 160 }],
  ])('%s', (_name, loadMs, restorePerChunkMs, want) => {
    expect(restorePass(loads(loadMs), 160, 4, 0, restorePerChunkMs, () => 0)).toEqual(want);
  });

  it('wakes each wait late by the timer lag, which never accumulates: every wait aims at the modelled compute end', () => {
    expect(restorePass(loads(0), 160, 4, 0, 0, () => 1).end).toBe(160 + 1);
  });

  it('asks for each layer when the layer before it starts computing', () => {
    const asked: Array<[number, number]> = [];
    restorePass([{ from: 0, until: 256, load: (l, at) => (asked.push([l, at]), at) }], 80, 4, 100, 0, () => 0);
    expect(asked).toEqual([
      [0, 100],
      [1, 100],
      [2, 120],
      [3, 140],
    ]);
  });
});
