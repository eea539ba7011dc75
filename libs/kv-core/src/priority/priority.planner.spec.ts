import type { SeqState } from '../batching/seq-state.js';
import { FairPriorityRanker } from './fair-priority.ranker.js';
import { planPriorityIteration } from './priority.planner.js';

let arrival = 0;
/** A sequence of pool `m`: priority, next-step blocks, blocks preempting it frees, prompt tokens. */
const s = (id: string, priority: number, blocks = 1, freeable = 0, promptTokens = 10): SeqState => ({
  id,
  priority,
  blocks,
  freeable,
  promptTokens,
  arrivalSeq: arrival++,
  pool: 'm',
});

describe(planPriorityIteration.name, () => {
  it.each<[string, SeqState[], SeqState[], number, number, { prefill: string[]; decode: string[]; preempt: string[] }]>([
    ['all fit: everyone runs', [s('r', 0, 1, 2)], [s('w', 0, 2)], 4, 10, { prefill: ['w'], decode: ['r'], preempt: [] }],
    [
      'a higher-priority waiter preempts the lowest runner for memory',
      [s('lo', 0, 1, 4), s('mid', 1, 1, 4)],
      [s('hi', 5, 4)],
      1,
      4,
      { prefill: ['hi'], decode: ['mid'], preempt: ['lo'] },
    ],
    [
      'a higher-priority waiter takes a batch slot: the displaced runner stays resident',
      [s('lo', 0, 1, 1)],
      [s('hi', 5, 1)],
      10,
      1,
      { prefill: ['hi'], decode: [], preempt: [] },
    ],
    ['a lower-priority waiter never preempts', [s('r', 5, 1, 4)], [s('w', 0, 4)], 1, 4, { prefill: [], decode: ['r'], preempt: [] }],
    ['equal priority: the runner keeps its place', [s('r', 1, 1, 4)], [s('w', 1, 4)], 1, 4, { prefill: [], decode: ['r'], preempt: [] }],
    ['no overtaking within a pool', [], [s('big', 3, 9), s('small', 1, 1)], 4, 4, { prefill: [], decode: [], preempt: [] }],
    [
      'a runner whose decode cannot fit is preempted, worst first',
      [s('a', 2, 1, 1), s('b', 1, 1, 1)],
      [],
      0,
      4,
      { prefill: [], decode: ['a'], preempt: ['b'] },
    ],
  ])('%s', (_name, running, waiting, available, maxBatch, plan) => {
    expect(planPriorityIteration({ running, waiting, maxBatch, maxPrefillTokens: 100, kvAvailable: { m: available } })).toEqual(plan);
  });

  it('never plans more blocks than the pool can free', () => {
    let x = 9;
    const rnd = (n: number) => (x = (x * 1103515245 + 12345) >>> 0) % n;
    for (let t = 0; t < 500; t++) {
      const running = Array.from({ length: rnd(5) }, (_, i) => s(`r${i}`, rnd(4), rnd(2), rnd(6)));
      const waiting = Array.from({ length: rnd(5) }, (_, i) => s(`w${i}`, rnd(4), rnd(8)));
      const available = rnd(8);
      const plan = planPriorityIteration({ running, waiting, maxBatch: 1 + rnd(4), maxPrefillTokens: 100, kvAvailable: { m: available } });
      const byId = new Map([...running, ...waiting].map((q) => [q.id, q]));
      const freed = plan.preempt.reduce((n, id) => n + byId.get(id)!.freeable!, 0);
      const spent = [...plan.prefill, ...plan.decode].reduce((n, id) => n + byId.get(id)!.blocks!, 0);
      expect(spent).toBeLessThanOrEqual(available + freed);
    }
  });
});

describe(FairPriorityRanker.name, () => {
  it.each([
    ['aging lifts a waiter one level per agingIterations', { updateEvery: 1, agingIterations: 2, tokensPerLevel: Infinity }, 4, 0, 2],
    ['ranks hold still between updates', { updateEvery: 8, agingIterations: 1, tokensPerLevel: Infinity }, 7, 0, 0],
    ['served tokens lower the rank', { updateEvery: 1, agingIterations: Infinity, tokensPerLevel: 10 }, 0, 25, -2],
    ['running resets the wait', { updateEvery: 1, agingIterations: 1, tokensPerLevel: Infinity }, 3, 1, 0],
  ])('%s', (_name, opts, waits, served, rank) => {
    const sut = new FairPriorityRanker(opts);
    const bases = new Map([['x', 0]]);
    for (let i = 0; i < waits; i++) sut.tick(new Map(), ['x'], bases);
    if (served > 0) sut.tick(new Map([['x', served]]), [], bases);
    expect(sut.rank('x', 0)).toBe(rank);
  });

  it.each([[{ updateEvery: 0 }], [{ agingIterations: 0 }], [{ tokensPerLevel: -1 }]])('rejects %p', (bad) => {
    expect(() => new FairPriorityRanker({ updateEvery: 1, agingIterations: 1, tokensPerLevel: 1, ...bad })).toThrow(RangeError);
  });

  /**
   * A low-priority request against a stream of high-priority ones: each iteration a fresh
   * priority-10 request arrives, and the one that ran finishes, so the only batch slot is always
   * wanted by a newcomer. With aging the low one runs within the documented bound; without, never.
   */
  const simulate = (agingIterations: number, iterations: number): number | undefined => {
    const sut = new FairPriorityRanker({ updateEvery: 4, agingIterations, tokensPerLevel: Infinity });
    const bases = new Map<string, number>([['low', -10]]);
    let live: SeqState[] = [{ id: 'low', priority: -10, promptTokens: 1, arrivalSeq: 0, pool: 'm', blocks: 1 }];
    for (let it = 1; it <= iterations; it++) {
      bases.set(`hi${it}`, 10);
      live.push({ id: `hi${it}`, priority: 10, promptTokens: 1, arrivalSeq: it, pool: 'm', blocks: 1 });
      const ranked = live.map((q) => ({ ...q, priority: sut.rank(q.id, bases.get(q.id)!) }));
      const plan = planPriorityIteration({ running: [], waiting: ranked, maxBatch: 1, maxPrefillTokens: 100, kvAvailable: { m: 1 } });
      if (plan.prefill.includes('low')) return it;
      sut.tick(
        new Map(plan.prefill.map((r) => [r, 1])),
        live.filter((q) => !plan.prefill.includes(q.id)).map((q) => q.id),
        bases,
      );
      for (const id of plan.prefill) sut.forget(id);
      live = live.filter((q) => !plan.prefill.includes(q.id));
    }
    return undefined;
  };

  it('bounds starvation: a priority -10 request runs within (10 - -10 + 1) · aging + updateEvery iterations', () => {
    const ran = simulate(5, 1000);
    expect(ran).toBeDefined();
    expect(ran!).toBeLessThanOrEqual(21 * 5 + 4);
  });

  it('without aging the same request starves', () => {
    expect(simulate(Infinity, 300)).toBeUndefined();
  });
});
