import { SwapInPolicy } from './swap-in.policy.js';

describe(SwapInPolicy.name, () => {
  it.each<[string, Array<[number, number]>, number[], number, boolean, 'sync' | 'async']>([
    ['no statistics yet → sync', [], [], 10, true, 'sync'],
    ['nothing else decodes → sync (nothing to overlap)', [[10, 100]], [10], 10, false, 'sync'],
    ['a cheap copy → sync', [[10, 1]], [10], 10, true, 'sync'],
    ['a copy longer than half an iteration → async', [[10, 100]], [10], 10, true, 'async'],
    ['exactly half an iteration → sync', [[10, 5]], [10], 10, true, 'sync'],
    [
      'the window forgets old swaps',
      [
        [10, 100],
        [10, 1],
        [10, 1],
      ],
      [10],
      10,
      true,
      'sync',
    ],
  ])('%s', (_name, swaps, iterations, blocks, others, mode) => {
    const sut = new SwapInPolicy({ window: 2, syncShare: 0.5, maxAsyncIterations: 3 });
    for (const [b, ms] of swaps) sut.recordSwap(b, ms);
    for (const ms of iterations) sut.recordIteration(ms);
    expect(sut.choose(blocks, others)).toBe(mode);
  });

  it.each<[string, boolean | undefined, 'sync' | 'async']>([
    ['copies beside compute (a GPU copy engine) → async for a long copy', true, 'async'],
    ['unstated → as beside compute', undefined, 'async'],
    ['copies on the cores compute uses (CPU) → sync, however long the copy', false, 'sync'],
  ])('%s', (_name, overlap, mode) => {
    const sut = new SwapInPolicy({ window: 2, syncShare: 0.5, maxAsyncIterations: 3, ...(overlap === undefined ? {} : { overlap }) });
    // A copy of 10 ms per block against 10 ms iterations, others decoding: long enough to hide.
    sut.recordSwap(10, 100);
    sut.recordIteration(10);
    expect(sut.choose(10, true)).toBe(mode);
  });

  it('settles an asynchronous swap-in left pending too long', () => {
    const sut = new SwapInPolicy({ window: 2, syncShare: 0.5, maxAsyncIterations: 3 });
    expect([2, 3, 4].map((n) => sut.mustSettle(n))).toEqual([false, false, true]);
  });

  it.each([[{ window: 0 }], [{ syncShare: -1 }], [{ maxAsyncIterations: 1.5 }]])('rejects %p', (bad) => {
    expect(() => new SwapInPolicy({ window: 2, syncShare: 0.5, maxAsyncIterations: 3, ...bad })).toThrow(RangeError);
  });
});

describe('SwapInPolicy.decide', () => {
  const sut = () => {
    const p = new SwapInPolicy({ window: 2, syncShare: 0.5, maxAsyncIterations: 3 });
    // A long copy against short iterations: adaptive goes asynchronous when others decode.
    p.recordSwap(10, 100);
    p.recordIteration(10);
    return p;
  };
  it.each<[string, 'adaptive' | 'sync' | 'async', boolean, 'sync' | 'async']>([
    ['adaptive asks the statistics', 'adaptive', true, 'async'],
    ['adaptive with nothing to overlap', 'adaptive', false, 'sync'],
    ['sync always waits', 'sync', true, 'sync'],
    ['async overlaps when others decode', 'async', true, 'async'],
    ['async with nothing to overlap waits', 'async', false, 'sync'],
  ])('%s', (_name, mode, others, want) => {
    expect(sut().decide(mode, 10, others)).toBe(want);
  });
});
