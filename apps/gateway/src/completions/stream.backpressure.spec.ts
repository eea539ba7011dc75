import { StreamBackpressure, type FlowAction } from './stream.backpressure.js';

describe(StreamBackpressure.name, () => {
  it.each<[string, Array<['push' | 'take', number]>, FlowAction[]]>([
    ['below the high mark: nothing', [['push', 1], ['push', 31], ['take', 0]], [null, null, null]],
    ['pause once at half the capacity', [['push', 32], ['push', 33], ['push', 40]], ['pause', null, null]],
    ['resume only at an eighth', [['push', 32], ['take', 20], ['take', 9], ['take', 8], ['take', 3]], ['pause', null, null, 'resume', null]],
    ['pause again after a resume', [['push', 32], ['take', 8], ['push', 32]], ['pause', 'resume', 'pause']],
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
