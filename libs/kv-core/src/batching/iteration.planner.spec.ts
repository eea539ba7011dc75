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
    [
      'no overtaking: an oversized head runs alone, the small prompt behind it waits',
      [seq('r1')],
      [seq('big', 500), seq('small', 5)],
      8,
      100,
      ['big'],
      ['r1'],
    ],
    [
      'within the budget, prompts batch; the first that does not fit waits',
      [],
      [seq('a', 60), seq('b', 60), seq('c', 5)],
      8,
      100,
      ['a'],
      [],
    ],
    ['starvation guard: oversized head admitted when idle', [], [seq('huge', 10_000), seq('small', 5)], 8, 100, ['huge'], []],
    [
      'an oversized head does not wait for the batch to drain: prefill first, as vLLM without chunked prefill',
      [seq('r1')],
      [seq('huge', 10_000)],
      8,
      100,
      ['huge'],
      ['r1'],
    ],
    ['a full batch admits nothing, oversized or not', [seq('r1'), seq('r2')], [seq('huge', 10_000)], 2, 100, [], ['r1', 'r2']],
    ['zero budget still runs an idle head', [], [seq('w1', 1), seq('w2', 1)], 8, 0, ['w1'], []],
    ['zero-token prompt (fully cached) fits any budget', [seq('r1')], [seq('cached', 0)], 8, 0, ['cached'], ['r1']],
  ])('%s', (_name, running, waiting, maxBatch, maxPrefillTokens, prefill, decode) => {
    expect(planIteration({ running, waiting, maxBatch, maxPrefillTokens })).toEqual({ prefill, decode, preempt: [] });
  });

  describe('with device KV memory planned', () => {
    /** A sequence of pool `m` whose next step takes `blocks` blocks; preempting it frees `freeable`. */
    const kv = (id: string, blocks: number, freeable = 0, priority = 0, pool = 'm'): SeqState => ({
      ...seq(id, 10, priority),
      blocks,
      freeable,
      pool,
    });
    it.each<[string, SeqState[], SeqState[], Record<string, number>, string[], string[], string[]]>([
      ['everything fits', [kv('r1', 1, 4)], [kv('w1', 3)], { m: 4 }, ['w1'], ['r1'], []],
      ['admission waits for blocks', [kv('r1', 1, 4)], [kv('w1', 4)], { m: 4 }, [], ['r1'], []],
      ['no overtaking on memory either', [kv('r1', 0, 4)], [kv('big', 9), kv('small', 1)], { m: 4 }, [], ['r1'], []],
      ['a full pool preempts the latest arrival, not everyone', [kv('old', 1, 3), kv('new', 1, 3)], [], { m: 1 }, [], ['old'], ['new']],
      ['preemption goes by priority before arrival', [kv('vip', 1, 3, 9), kv('old', 1, 3, 0)], [], { m: 0 }, [], ['vip'], ['old']],
      ['preempts until the rest fit', [kv('a', 1, 1), kv('b', 1, 1), kv('c', 1, 0)], [], { m: 0 }, [], ['a'], ['c', 'b']],
      ['the last running sequence preempts itself when nothing fits', [kv('only', 1, 5)], [], { m: 0 }, [], [], ['only']],
      ['an iteration that preempts admits nothing: the preempted keep their turn', [kv('r', 1, 5)], [kv('w', 1)], { m: 0 }, [], [], ['r']],
      ['blocks freed by finished work admit waiting work', [kv('a', 0, 1)], [kv('w', 5)], { m: 5 }, ['w'], ['a'], []],
      ['pools are planned separately', [kv('x', 1, 2, 0, 'm1'), kv('y', 1, 2, 0, 'm2')], [], { m1: 1, m2: 0 }, [], ['x'], ['y']],
      [
        'running beyond maxBatch are preempted before decoding ones',
        [kv('a', 1, 2), kv('b', 1, 2), kv('c', 0, 2)],
        [],
        { m: 1 },
        [],
        ['a', 'b'],
        ['c'],
      ],
      [
        'idle head over the token budget still admitted when its blocks fit',
        [],
        [{ ...kv('huge', 3), promptTokens: 10_000 }],
        { m: 3 },
        ['huge'],
        [],
        [],
      ],
      ['idle head never beyond its pool', [], [kv('huge', 4)], { m: 3 }, [], [], []],
    ])('%s', (_name, running, waiting, kvAvailable, prefill, decode, preempt) => {
      expect(planIteration({ running, waiting, maxBatch: 2, maxPrefillTokens: 100, kvAvailable })).toEqual({ prefill, decode, preempt });
    });
  });

  describe('holding long prompts for the next pass', () => {
    it.each<[string, SeqState[], string[]]>([
      [
        'a long prompt behind short ones leads the next pass, later short ones go now',
        [seq('s1', 100), seq('long', 3000), seq('s2', 50)],
        ['s1', 's2'],
      ],
      ['one as long as the pass so far still joins it', [seq('a', 100), seq('b', 100), seq('c', 200)], ['a', 'b', 'c']],
      ['the head always goes, and shorter ones join it', [seq('long', 900), seq('s1', 100)], ['long', 's1']],
      [
        'a fully cached head: a short prompt joins it, a long one waits',
        [seq('cached', 0), seq('w', 10), seq('long', 900)],
        ['cached', 'w'],
      ],
      ['a prompt of a chunk or less joins whatever the pass holds', [seq('s', 10), seq('m', 256), seq('l', 300)], ['s', 'm']],
      ['every longer one is passed over, not just the first', [seq('s', 64), seq('l1', 900), seq('l2', 700), seq('t', 60)], ['s', 't']],
      ['the budget still stops admission', [seq('s', 600), seq('long', 3000), seq('t', 500)], ['s']],
    ])('%s', (_name, waiting, prefill) => {
      expect(planIteration({ running: [seq('r')], waiting, maxBatch: 8, maxPrefillTokens: 1000, holdLongPrompts: true }).prefill).toEqual(
        prefill,
      );
    });

    it('without it, the same queue is strict arrival order', () => {
      const waiting = [seq('s1', 100), seq('long', 3000), seq('s2', 50)];
      expect(planIteration({ running: [], waiting, maxBatch: 8, maxPrefillTokens: 10_000 }).prefill).toEqual(['s1', 'long', 's2']);
    });

    it('the held prompt leads the pass after', () => {
      const [s1, long, s2, s3] = [seq('s1', 100), seq('long', 3000), seq('s2', 50), seq('s3', 40)];
      const first = planIteration({ running: [], waiting: [s1, long, s2], maxBatch: 8, maxPrefillTokens: 10_000, holdLongPrompts: true });
      expect(first.prefill).toEqual(['s1', 's2']);
      const next = planIteration({ running: [], waiting: [long, s3], maxBatch: 8, maxPrefillTokens: 10_000, holdLongPrompts: true });
      expect(next.prefill).toEqual(['long', 's3']);
    });
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
