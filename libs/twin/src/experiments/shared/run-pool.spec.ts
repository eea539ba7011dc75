import { runPool } from './run-pool.js';

// A module a thread can import as it is (a worker thread runs plain JavaScript, not this spec's TypeScript).
const fixture = new URL('./run-pool.fixture.mjs', import.meta.url).href;

describe('runPool', () => {
  it.each([1, 2])('returns every result in task order on %i thread(s), taking tasks in the order given', async (workers) => {
    const events: unknown[] = [];
    const done: number[] = [];
    const sut = await runPool<number, number>({
      module: fixture,
      fn: 'square',
      tasks: [1, 2, 3, 4, 5],
      workers,
      order: [4, 3, 2, 1, 0],
      onEvent: (e) => events.push(e),
      onDone: (i) => done.push(i),
    });
    expect(sut).toEqual([1, 4, 9, 16, 25]);
    expect([...events].sort()).toEqual(['start 1', 'start 2', 'start 3', 'start 4', 'start 5']);
    expect([...done].sort()).toEqual([0, 1, 2, 3, 4]);
    if (workers === 1) expect(done).toEqual([4, 3, 2, 1, 0]);
  });

  it('fails when a task throws on a worker', async () => {
    await expect(runPool({ module: fixture, fn: 'missing', tasks: [1, 2], workers: 2 })).rejects.toThrow();
  });
});
