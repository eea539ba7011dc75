import { PriorityTrace } from './priority.trace.js';

describe(PriorityTrace.name, () => {
  const trace = (pattern: 'markov' | 'random', moveChance = 0.5) => new PriorityTrace({ pattern, levels: 8, moveChance, seed: 7 });

  it.each(['markov', 'random'] as const)('%s: a pure function of conversation and update, in range', (pattern) => {
    const a = trace(pattern);
    const b = trace(pattern);
    // b is asked in another order: the trace is offline, not a function of who asked first.
    const levels = Array.from({ length: 40 }, (_, u) => a.level(3, u));
    for (let u = 39; u >= 0; u--) expect(b.level(3, u)).toBe(levels[u]);
    for (const l of levels) expect(l >= 0 && l < 8 && Number.isInteger(l)).toBe(true);
  });

  it('markov moves at most one level per update, and keeps its level about 1 − moveChance of the time', () => {
    const sut = trace('markov', 0.5);
    let stays = 0;
    for (let u = 1; u < 2000; u++) {
      const d = Math.abs(sut.level(1, u) - sut.level(1, u - 1));
      expect(d).toBeLessThanOrEqual(1);
      if (d === 0) stays++;
    }
    expect(stays / 1999).toBeGreaterThan(0.45);
    expect(stays / 1999).toBeLessThan(0.55);
  });

  it('random draws afresh: consecutive levels agree about 1 / levels of the time', () => {
    const sut = trace('random');
    let same = 0;
    for (let u = 1; u < 4000; u++) if (sut.level(2, u) === sut.level(2, u - 1)) same++;
    expect(same / 3999).toBeGreaterThan(0.09);
    expect(same / 3999).toBeLessThan(0.16);
  });

  it.each([
    ['one level', { levels: 1, moveChance: 0.5 }],
    ['a move chance over 1', { levels: 4, moveChance: 1.5 }],
  ])('rejects %s', (_name, o) => {
    expect(() => new PriorityTrace({ pattern: 'markov', seed: 1, ...o })).toThrow(RangeError);
  });
});
