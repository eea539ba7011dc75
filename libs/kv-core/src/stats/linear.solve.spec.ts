import { nonNegativeLeastSquares, solveLinear } from './linear.solve.js';

describe(solveLinear.name, () => {
  it.each([
    { m: [[2]], rhs: [4], want: [2] },
    {
      m: [
        [0, 1],
        [1, 0],
      ],
      rhs: [3, 5],
      want: [5, 3],
    }, // needs a pivot swap
    {
      m: [
        [1, 1],
        [1, -1],
      ],
      rhs: [4, 2],
      want: [3, 1],
    },
  ])('solves $m · x = $rhs', ({ m, rhs, want }) => {
    expect(solveLinear(m, rhs)!.map((x) => Math.round(x * 1e9) / 1e9)).toEqual(want);
  });

  it('answers null for a singular system', () => {
    expect(
      solveLinear(
        [
          [1, 2],
          [2, 4],
        ],
        [1, 2],
      ),
    ).toBeNull();
  });
});

describe(nonNegativeLeastSquares.name, () => {
  const close = (xs: number[]) => xs.map((x) => Math.round(x * 1e6) / 1e6);

  it.each([
    {
      name: 'exact linear data: its coefficients',
      xs: [
        [1, 0],
        [1, 1],
        [1, 2],
        [1, 3],
      ],
      ys: [2, 5, 8, 11],
      want: [2, 3],
    },
    {
      name: 'a term that would fit negative is held at 0 and the rest refitted',
      // y = 10 − x: the slope would be −1; with it at 0 the intercept is the mean.
      xs: [
        [1, 0],
        [1, 1],
        [1, 2],
        [1, 3],
      ],
      ys: [10, 9, 8, 7],
      want: [8.5, 0],
    },
    {
      name: 'a term no row exercises stays 0',
      xs: [
        [1, 2, 0],
        [1, 4, 0],
        [1, 6, 0],
      ],
      ys: [5, 9, 13],
      want: [1, 2, 0],
    },
    { name: 'no rows: zeros', xs: [] as number[][], ys: [] as number[], want: [] },
  ])('$name', ({ xs, ys, want }) => {
    expect(close(nonNegativeLeastSquares(xs, ys))).toEqual(want);
  });
});
