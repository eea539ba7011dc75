import { call, EventQueue } from './event.queue.js';

describe(EventQueue.name, () => {
  it('fires events in time order, ties in the order they were scheduled', () => {
    const sut = new EventQueue();
    const fired: string[] = [];
    for (const [t, name] of [
      [5, 'c'],
      [1, 'a'],
      [5, 'd'],
      [3, 'b'],
      [5, 'e'],
    ] as const)
      sut.at(
        t,
        call(() => fired.push(name)),
      );
    sut.run();
    expect(fired).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(sut.now).toBe(5);
  });

  it('runs events scheduled while it runs, and never goes back in time', () => {
    const sut = new EventQueue();
    const fired: Array<[string, number]> = [];
    sut.at(
      10,
      call((now) => {
        fired.push(['first', now]);
        sut.after(
          5,
          call((t) => fired.push(['later', t])),
        );
        sut.at(
          2,
          call((t) => fired.push(['past', t])),
        );
      }),
    );
    sut.run();
    expect(fired).toEqual([
      ['first', 10],
      ['past', 10],
      ['later', 15],
    ]);
  });

  it('stops at a time limit with the clock there, leaving later events queued', () => {
    const sut = new EventQueue();
    let n = 0;
    for (let t = 0; t < 100; t += 10)
      sut.at(
        t,
        call(() => n++),
      );
    sut.run(45);
    expect([n, sut.now, sut.pending]).toEqual([5, 45, 5]);
  });

  it('stops when told', () => {
    const sut = new EventQueue();
    let n = 0;
    for (let t = 0; t < 10; t++)
      sut.at(
        t,
        call(() => n++),
      );
    sut.run(Infinity, () => n === 3);
    expect(n).toBe(3);
  });

  it('keeps order over many events (heap growth)', () => {
    const sut = new EventQueue();
    const times: number[] = [];
    let x = 7;
    for (let i = 0; i < 5000; i++) {
      x = (x * 48271) % 2147483647;
      sut.at(
        x % 1000,
        call((now) => times.push(now)),
      );
    }
    sut.run();
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(sut.fired).toBe(5000);
  });

  it('refuses a NaN time', () => {
    expect(() =>
      new EventQueue().at(
        NaN,
        call(() => undefined),
      ),
    ).toThrow(RangeError);
  });
});
