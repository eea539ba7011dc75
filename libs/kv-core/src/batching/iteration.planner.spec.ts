import { planIteration } from './iteration.planner.js';
import type { SeqState } from './seq-state.js';

let arrival = 0;
const seq = (id: string, promptTokens = 10, priority = 0, arrivalSeq = arrival++): SeqState => ({ id, promptTokens, priority, arrivalSeq });

describe(planIteration.name, () => {
  it.each<[string, SeqState[], SeqState[], number, number, string[], string[]]>([
    ['nothing to do', [], [], 4, 100, [], []],
    ['decode all running, no waiting', [seq('r1'), seq('r2')], [], 4, 100, [], ['r1', 'r2']],
    ['admit waiting into free slots', [seq('r1')], [seq('w1'), seq('w2')], 4, 100, ['w1', 'w2'], ['r1']],
    ['batch full: no admission', [seq('r1'), seq('r2')], [seq('w1')], 2, 100, [], ['r1', 'r2']],
    ['batch room limits admission', [seq('r1')], [seq('w1'), seq('w2'), seq('w3')], 3, 100, ['w1', 'w2'], ['r1']],
    ['running beyond maxBatch: best first', [seq('lo', 1, 0), seq('hi', 1, 5), seq('mid', 1, 2)], [], 2, 100, [], ['hi', 'mid']],
    ['prefill budget limits admission', [seq('r1')], [seq('w1', 60), seq('w2', 60)], 8, 100, ['w1'], ['r1']],
    ['budget exactly used', [], [seq('w1', 40), seq('w2', 60)], 8, 100, ['w1', 'w2'], []],
    ['priority before arrival', [], [seq('old', 10, 0, 1), seq('urgent', 10, 9, 2)], 1, 100, ['urgent'], []],
    ['arrival order within a priority', [], [seq('b', 10, 1, 7), seq('a', 10, 1, 3)], 1, 100, ['a'], []],
    ['no overtaking: a later small prompt waits behind a big one', [seq('r1')], [seq('big', 500), seq('small', 5)], 8, 100, [], ['r1']],
    ['starvation guard: oversized head admitted when idle', [], [seq('huge', 10_000), seq('small', 5)], 8, 100, ['huge'], []],
    ['starvation guard only when nothing runs', [seq('r1')], [seq('huge', 10_000)], 8, 100, [], ['r1']],
    ['zero budget still runs an idle head', [], [seq('w1', 1), seq('w2', 1)], 8, 0, ['w1'], []],
    ['zero-token prompt (fully cached) fits any budget', [seq('r1')], [seq('cached', 0)], 8, 0, ['cached'], ['r1']],
  ])('%s', (_name, running, waiting, maxBatch, maxPrefillTokens, prefill, decode) => {
    expect(planIteration({ running, waiting, maxBatch, maxPrefillTokens })).toEqual({ prefill, decode });
  });

  it('does not reorder its inputs', () => {
    const waiting = [seq('b', 1, 0, 2), seq('a', 1, 5, 1)];
    const before = waiting.map((s) => s.id);
    planIteration({ running: [], waiting, maxBatch: 4, maxPrefillTokens: 100 });
    expect(waiting.map((s) => s.id)).toEqual(before);
  });

  it.each([
    ['maxBatch 0', 0, 10],
    ['fractional maxBatch', 1.5, 10],
    ['negative budget', 4, -1],
  ])('rejects %s', (_name, maxBatch, maxPrefillTokens) => {
    expect(() => planIteration({ running: [], waiting: [], maxBatch, maxPrefillTokens })).toThrow(RangeError);
  });
});
