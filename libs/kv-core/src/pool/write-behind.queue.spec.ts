import { WriteBehindQueue } from './write-behind.queue.js';

/** A job: its name, its bytes, and the payload it shares (if any). */
interface Job {
  readonly name: string;
  readonly bytes: number;
  readonly payload?: string;
  readonly origin?: number;
}

const PAYLOADS = new Map<string, object>();
const payload = (name: string): object => PAYLOADS.get(name) ?? PAYLOADS.set(name, {}).get(name)!;
const cost = (j: Job) => (j.payload === undefined ? { bytes: j.bytes } : { bytes: j.bytes, shared: payload(j.payload) });

describe(WriteBehindQueue.name, () => {
  it.each<[string, number, Job[], string[], number]>([
    [
      'under the bound: all taken',
      100,
      [
        { name: 'a', bytes: 40 },
        { name: 'b', bytes: 60 },
      ],
      ['a', 'b'],
      100,
    ],
    [
      'past the bound: refused',
      100,
      [
        { name: 'a', bytes: 60 },
        { name: 'b', bytes: 60 },
      ],
      ['a'],
      60,
    ],
    ['an empty queue takes a job larger than the bound', 100, [{ name: 'a', bytes: 500 }], ['a'], 500],
    [
      'over the bound by one large job: even a free share is refused',
      100,
      [
        { name: 'a', bytes: 500, payload: 'p' },
        { name: 'b', bytes: 500, payload: 'p' },
      ],
      ['a'],
      500,
    ],
    [
      'segments of one payload count it once',
      100,
      [
        { name: 'a', bytes: 80, payload: 'p' },
        { name: 'b', bytes: 80, payload: 'p' },
        { name: 'c', bytes: 80, payload: 'p' },
      ],
      ['a', 'b', 'c'],
      80,
    ],
    [
      'another payload is counted apart',
      100,
      [
        { name: 'a', bytes: 80, payload: 'p' },
        { name: 'b', bytes: 80, payload: 'q' },
      ],
      ['a'],
      80,
    ],
  ])('%s', (_, max, jobs, queued, bytes) => {
    const sut = new WriteBehindQueue<Job>(max, cost);
    const taken = jobs.filter((j) => sut.offer(j)).map((j) => j.name);
    expect(taken).toEqual(queued);
    expect(sut.length).toBe(queued.length);
    expect(sut.bytes).toBe(bytes);
  });

  it('counts a batch until it is done, a shared payload until its last job is', () => {
    const sut = new WriteBehindQueue<Job>(1000, cost);
    const jobs: Job[] = [
      { name: 'a', bytes: 100, payload: 'x' },
      { name: 'b', bytes: 100, payload: 'x' },
      { name: 'c', bytes: 10 },
    ];
    for (const j of jobs) sut.offer(j);
    const batch = sut.takeBatch(2, () => true);
    expect(batch.map((j) => j.name)).toEqual(['a', 'b']);
    expect([sut.length, sut.bytes]).toEqual([1, 110]);
    sut.done(batch[0]!);
    expect(sut.bytes).toBe(110);
    sut.done(batch[1]!);
    expect(sut.bytes).toBe(10);
    for (const j of sut.takeAll()) sut.done(j);
    expect([sut.length, sut.bytes]).toEqual([0, 0]);
  });

  it.each<[string, number, Array<number>, number[]]>([
    ['one origin, cut at max', 2, [1, 1, 1], [2, 1]],
    ['origins apart', 8, [1, 1, 2, 3, 3], [2, 1, 2]],
    ['empty', 4, [], []],
  ])('batches: %s', (_, max, origins, sizes) => {
    const sut = new WriteBehindQueue<Job>(Infinity, cost);
    origins.forEach((origin, i) => sut.offer({ name: `j${i}`, bytes: 1, origin }));
    const got: number[] = [];
    for (let b = sut.takeBatch(max, (f, n) => f.origin === n.origin); b.length > 0; b = sut.takeBatch(max, (f, n) => f.origin === n.origin))
      got.push(b.length);
    expect(got).toEqual(sizes);
  });
});
