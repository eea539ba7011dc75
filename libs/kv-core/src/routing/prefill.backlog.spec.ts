import { PrefillBacklog } from './prefill.backlog.js';

describe(PrefillBacklog.name, () => {
  it.each<[string, Array<[string, number, number]>, number, number]>([
    ['nothing sent', [], 0, 0],
    ['one prefill, not started', [['a', 120, 0]], 0, 120],
    ['one prefill, partly worked through', [['a', 120, 0]], 50, 70],
    ['one prefill, done', [['a', 120, 0]], 200, 0],
    [
      'two, the second after some of the first drained',
      [
        ['a', 100, 0],
        ['a', 40, 30],
      ],
      30,
      110,
    ],
    [
      'two, the second after the first drained',
      [
        ['a', 100, 0],
        ['a', 40, 150],
      ],
      160,
      30,
    ],
    ['another node’s work is not this one’s', [['b', 100, 0]], 0, 0],
    [
      'zero, negative and NaN work add nothing',
      [
        ['a', 0, 0],
        ['a', -5, 0],
        ['a', NaN, 0],
      ],
      0,
      0,
    ],
  ])('%s', (_name, adds, at, left) => {
    const sut = new PrefillBacklog();
    for (const [node, ms, now] of adds) sut.add(node, ms, now);
    expect(sut.get('a', at)).toBe(left);
  });

  it.each<[string, Array<[string, number, number]>, [number, number], number, number]>([
    ['a refused dispatch leaves no work behind', [['a', 120, 0]], [120, 0], 0, 0],
    [
      'only the refused one goes; the other still drains',
      [
        ['a', 100, 0],
        ['a', 40, 0],
      ],
      [40, 0],
      10,
      90,
    ],
    [
      'taken back after some drained: what is left of the rest',
      [
        ['a', 100, 0],
        ['a', 40, 0],
      ],
      [40, 30],
      30,
      70,
    ],
    ['never below zero', [['a', 50, 0]], [80, 40], 40, 0],
    ['nothing to take from a node nothing was sent to', [], [50, 0], 0, 0],
    ['NaN takes nothing', [['a', 50, 0]], [NaN, 0], 0, 50],
  ])('take: %s', (_name, adds, [ms, takenAt], at, left) => {
    const sut = new PrefillBacklog();
    for (const [node, w, now] of adds) sut.add(node, w, now);
    sut.take('a', ms, takenAt);
    expect(sut.get('a', at)).toBe(left);
  });

  it('looking ahead (a request due later) changes nothing for now', () => {
    const sut = new PrefillBacklog();
    sut.add('a', 100, 0);
    expect(sut.get('a', 5000)).toBe(0);
    expect(sut.get('a', 10)).toBe(90);
  });

  it('forgets a dropped node', () => {
    const sut = new PrefillBacklog();
    sut.add('a', 100, 0);
    sut.drop('a');
    expect(sut.get('a', 0)).toBe(0);
  });
});
