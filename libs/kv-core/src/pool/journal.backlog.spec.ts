import { JournalBacklog, JOURNAL_RETRY_FIRST_MS, JOURNAL_RETRY_MAX_MS } from './journal.backlog.js';
import type { JournalRecord } from './journal.codec.js';

const rec = (layer: number): JournalRecord => ({ kind: 'remove', chunkKey: 'k', layer });
const layers = (rs: readonly JournalRecord[]): number[] => rs.map((r) => (r.kind === 'remove' ? r.layer : -1));

type Step = ['add', number] | ['cover'] | ['land'] | ['fail', string];

function run(steps: readonly Step[]): JournalBacklog {
  const sut = new JournalBacklog();
  let next = 0;
  for (const s of steps) {
    if (s[0] === 'add') sut.add(Array.from({ length: s[1] }, () => rec(next++)));
    else if (s[0] === 'cover') sut.cover();
    else if (s[0] === 'land') sut.landed(sut.due().length);
    else sut.failed(new Error(s[1]));
  }
  return sut;
}

describe(JournalBacklog.name, () => {
  it.each<[string, Step[], number[], { state: 'ok' | 'failing'; failures: number; pending: number; written: number }]>([
    ['nothing queued: nothing due, healthy', [], [], { state: 'ok', failures: 0, pending: 0, written: 0 }],
    ['queued but no flush asked for: nothing due yet', [['add', 2]], [], { state: 'ok', failures: 0, pending: 2, written: 0 }],
    ['a flush covers what is queued', [['add', 2], ['cover']], [0, 1], { state: 'ok', failures: 0, pending: 2, written: 0 }],
    [
      'records queued after the flush wait for the next (their data is not synced yet)',
      [['add', 2], ['cover'], ['add', 1]],
      [0, 1],
      { state: 'ok', failures: 0, pending: 3, written: 0 },
    ],
    [
      'a landed write takes the covered records off the front',
      [['add', 2], ['cover'], ['add', 1], ['land']],
      [],
      { state: 'ok', failures: 0, pending: 1, written: 2 },
    ],
    [
      'a failed write keeps every record due, in order',
      [['add', 2], ['cover'], ['fail', 'ENOSPC'], ['add', 1]],
      [0, 1],
      { state: 'failing', failures: 1, pending: 3, written: 0 },
    ],
    [
      'the next flush after a failure covers the later records too',
      [['add', 2], ['cover'], ['fail', 'ENOSPC'], ['add', 1], ['cover']],
      [0, 1, 2],
      { state: 'failing', failures: 1, pending: 3, written: 0 },
    ],
    [
      'a landed write after failures is healthy again (the count stays)',
      [['add', 1], ['cover'], ['fail', 'EIO'], ['fail', 'EIO'], ['land']],
      [],
      { state: 'ok', failures: 2, pending: 0, written: 1 },
    ],
  ])('%s', (_name, steps, due, health) => {
    const sut = run(steps);
    expect(layers(sut.due())).toEqual(due);
    expect(sut.health).toMatchObject({ state: health.state, failures: health.failures, pending: health.pending });
    expect(sut.hasPending).toBe(health.pending > 0);
    expect(sut.written).toBe(health.written);
  });

  it.each<[string, Step[], string | undefined]>([
    ['healthy: no error', [['add', 1], ['cover'], ['land']], undefined],
    [
      'failing: the last error message',
      [
        ['fail', 'first'],
        ['fail', 'second'],
      ],
      'second',
    ],
    ['healthy again: the error is gone', [['add', 1], ['cover'], ['fail', 'EIO'], ['land']], undefined],
  ])('lastError, %s', (_name, steps, lastError) => {
    expect(run(steps).health.lastError).toBe(lastError);
  });

  it('takes a non-Error failure as its string', () => {
    const sut = new JournalBacklog();
    sut.failed('disk gone');
    expect(sut.health.lastError).toBe('disk gone');
  });

  it.each<[string, number, number[]]>([
    ['the first retry waits the first delay', 1, [JOURNAL_RETRY_FIRST_MS]],
    ['each later one doubles', 4, [100, 200, 400, 800]],
    ['up to the cap', 8, [100, 200, 400, 800, 1600, 3200, JOURNAL_RETRY_MAX_MS, JOURNAL_RETRY_MAX_MS]],
  ])('backoff: %s', (_name, n, want) => {
    const sut = new JournalBacklog();
    expect(Array.from({ length: n }, () => sut.nextRetryMs())).toEqual(want);
  });

  it('starts the backoff over once a write lands', () => {
    const sut = new JournalBacklog();
    sut.nextRetryMs();
    sut.nextRetryMs();
    sut.landed(0);
    expect(sut.nextRetryMs()).toBe(JOURNAL_RETRY_FIRST_MS);
  });
});
