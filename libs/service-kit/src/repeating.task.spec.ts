import { jest } from '@jest/globals';
import { RepeatingTask } from './repeating.task.js';

describe(RepeatingTask.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs every period from bootstrap until shutdown', () => {
    let runs = 0;
    const sut = new RepeatingTask(() => runs++, 100);
    sut.onApplicationBootstrap();
    expect(runs).toBe(0);
    jest.advanceTimersByTime(350);
    expect(runs).toBe(3);
    sut.onApplicationShutdown();
    jest.advanceTimersByTime(1000);
    expect(runs).toBe(3);
  });

  it('can run once at start, and starting twice does not double the rate', () => {
    let runs = 0;
    const sut = new RepeatingTask(() => runs++, 100, true);
    sut.start();
    sut.start();
    expect(runs).toBe(1);
    jest.advanceTimersByTime(100);
    expect(runs).toBe(2);
    sut.stop();
  });

  it('refuses a period that is not positive', () => {
    expect(() => new RepeatingTask(() => undefined, 0)).toThrow(RangeError);
  });
});
