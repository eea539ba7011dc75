import { StreamBackpressure, type FlowAction } from './stream.backpressure.js';

describe(StreamBackpressure.name, () => {
  it.each<[string, Array<['push' | 'take', number]>, FlowAction[]]>([
    [
      'below the high mark: nothing',
      [
        ['push', 1],
        ['push', 15],
        ['take', 0],
      ],
      [null, null, null],
    ],
    [
      'pause once at a quarter of the capacity',
      [
        ['push', 16],
        ['push', 17],
        ['push', 40],
      ],
      ['pause', null, null],
    ],
    [
      'resume only at a sixteenth',
      [
        ['push', 16],
        ['take', 10],
        ['take', 5],
        ['take', 4],
        ['take', 3],
      ],
      ['pause', null, null, 'resume', null],
    ],
    [
      'pause again after a resume',
      [
        ['push', 16],
        ['take', 4],
        ['push', 16],
      ],
      ['pause', 'resume', 'pause'],
    ],
    ['overflow at capacity, paused or not', [['push', 64]], ['overflow']],
    ['take while not paused: nothing', [['take', 0]], [null]],
  ])('%s', (_name, steps, expected) => {
    const sut = new StreamBackpressure(64);
    expect(steps.map(([op, size]) => (op === 'push' ? sut.afterPush(size) : sut.afterTake(size)))).toEqual(expected);
  });

  it.each([0, 7, 8.5])('refuses capacity %s', (c) => {
    expect(() => new StreamBackpressure(c)).toThrow(RangeError);
  });
});
