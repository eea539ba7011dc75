import { nodeDecodePath, nodePathFit } from './request-path.fit.js';

interface FitCase {
  name: string;
  samples: Record<number, number[]>;
  exportMs: number;
  base: number;
  slope: number;
}

const FITS: FitCase[] = [
  // sizes → the 25th percentile of each; exports of whole chunks (256 tokens) are taken out.
  {
    name: 'a line through the low quantiles, exports out',
    samples: { 16: [1, 1, 1, 9], 1024: [3, 3, 3, 9] },
    exportMs: 0.25,
    base: 1 - 0.016 * ((2 - 1) / (1.024 - 0.016)),
    slope: (2 - 1) / (1.024 - 0.016),
  },
  {
    name: 'no slope below zero: noise that makes long prompts look cheaper',
    samples: { 16: [2, 2, 2, 2], 1024: [1.5, 1.5, 1.5, 1.5] },
    exportMs: 0,
    base: 1.75,
    slope: 0,
  },
  { name: 'one size: a base alone', samples: { 64: [0.5, 0.7, 0.9, 4] }, exportMs: 0, base: 0.65, slope: 0 },
];

describe('the request path calibration', () => {
  it.each(FITS)("fits the node's prefill path: $name", ({ samples, exportMs, base, slope }) => {
    const fit = nodePathFit(samples, exportMs);
    expect(fit.msPerKToken).toBeCloseTo(slope, 6);
    expect(fit.baseMs).toBeCloseTo(base, 6);
  });

  it.each([
    { tpot: [0.2, 0.3, 0.4, 0.5, 0.6], turns: [0.01, 0.02, 0.03], want: 0.3 - 0.02 },
    { tpot: [0.01, 0.01, 0.02], turns: [0.05], want: 0 },
  ])('takes a loop turn out of the decode step ($want ms)', ({ tpot, turns, want }) => {
    expect(nodeDecodePath(tpot, turns)).toBeCloseTo(want, 6);
  });
});
