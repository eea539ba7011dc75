import { create } from '@bufbuild/protobuf';
import { ExpectedHoldings, KvDirectory, SessionTable } from '@mnemo/kv-core';
import { KvChangeKind, KvEventSchema, KvTier, type KvEvent } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import type { KvReportRequester } from './kv-report.port.js';
import { RecordKvEventCommand } from './record-kv-event.command.js';
import { RecordKvEventUseCase, REPORT_RETRY_MS } from './record-kv-event.use-case.js';

/** Port double: records whom a report was asked of. */
class RecordingRequester implements KvReportRequester {
  readonly asked: string[][] = [];
  request(nodeIds: readonly string[]): void {
    this.asked.push([...nodeIds]);
  }
}

const event = (nodeId: string, seq: number, changes: Array<[KvChangeKind, KvTier, string[]]>, full = false): KvEvent =>
  create(KvEventSchema, {
    nodeId,
    seq: BigInt(seq),
    full,
    changes: changes.map(([kind, tier, chunkKeys]) => ({ kind, tier, model: 'm', chunkKeys })),
  });

function setup() {
  const clock = { ms: 0, monotonicMs: () => clock.ms, unixMs: () => clock.ms };
  const directory = new KvDirectory(1000);
  const requester = new RecordingRequester();
  const sessions = new SessionTable(100);
  const metrics = new SchedulerMetrics(new ServiceMetrics('scheduler-test'));
  const expected = new ExpectedHoldings(100, 60_000);
  const sut = new RecordKvEventUseCase(
    directory,
    requester,
    metrics,
    new JsonLogger('test', 'error', () => undefined),
    sessions,
    expected,
    clock,
  );
  const record = (e: KvEvent) => sut.execute(new RecordKvEventCommand(e));
  return { sut, directory, requester, record, sessions, metrics, expected, clock };
}

describe(RecordKvEventUseCase.name, () => {
  it('applies diffs in sequence and asks one report of a node it has not heard from before', () => {
    const { directory, requester, record } = setup();
    record(event('n1', 1, [[KvChangeKind.STORED, KvTier.DEVICE, ['a', 'b']]]));
    record(event('n1', 2, [[KvChangeKind.REMOVED, KvTier.DEVICE, ['b']]]));
    expect(directory.holders('a')).toEqual([{ nodeId: 'n1', tier: 'device' }]);
    expect(directory.holders('b')).toEqual([]);
    expect(requester.asked).toEqual([['n1']]);
  });

  it('asks again when a report never came (lost while NATS restarted), but not before REPORT_RETRY_MS', () => {
    const { requester, record, sut, clock } = setup();
    record(event('n1', 1, []));
    expect(requester.asked).toEqual([['n1']]);
    record(event('n1', 3, []));
    sut.nodeJoined('n1');
    expect(requester.asked).toHaveLength(1);
    // In sequence again, but still unanswered: asked again once the retry time has passed.
    record(event('n1', 4, []));
    expect(requester.asked).toHaveLength(1);
    clock.ms += REPORT_RETRY_MS;
    record(event('n1', 5, []));
    expect(requester.asked).toEqual([['n1'], ['n1']]);
    record(event('n1', 5, [], true));
    clock.ms += REPORT_RETRY_MS;
    record(event('n1', 6, []));
    expect(requester.asked).toHaveLength(2);
  });

  it.each<[string, number[], number]>([
    ['in order', [5, 6, 7], 0],
    ['a gap', [5, 7], 1],
    ['a repeat (node restarted its counter)', [5, 1], 1],
  ])('after the first event, %s → %s more report requests', (_n, seqs, extra) => {
    const { requester, record } = setup();
    const [first, ...rest] = seqs;
    record(event('n1', first!, []));
    record(event('n1', first!, [], true)); // the report answering the first request
    requester.asked.length = 0;
    for (const s of rest) record(event('n1', s, []));
    expect(requester.asked).toHaveLength(extra);
  });

  it.each<[string, Array<[KvChangeKind, KvTier, string[]]>, boolean, string[], string[]]>([
    ['stored: confirmed, the directory has it', [[KvChangeKind.STORED, KvTier.DEVICE, ['a']]], false, [], ['n1']],
    ['removed (evicted before we heard it was stored)', [[KvChangeKind.REMOVED, KvTier.DEVICE, ['a']]], false, [], []],
    ['truncated', [[KvChangeKind.TRUNCATED, KvTier.HOST, ['a']]], false, [], []],
    ['a full report listing it', [[KvChangeKind.STORED, KvTier.HOST, ['a']]], true, [], ['n1']],
    [
      'a full report without it: still coming (the report may predate the dispatch)',
      [[KvChangeKind.STORED, KvTier.HOST, ['z']]],
      true,
      ['n1'],
      [],
    ],
    ['another node stores it', [], false, ['n1'], []],
  ])('a KV event settles what routing expected on the node: %s', (_n, changes, full, stillExpected, inDirectory) => {
    const { record, expected, directory } = setup();
    expected.record('n1', { chunkKeys: ['a'] }, Date.now());
    record(event('n1', 1, changes, full));
    record(event('n2', 1, [[KvChangeKind.STORED, KvTier.HOST, ['b']]]));
    expect(expected.holders('a', Date.now())).toEqual(stillExpected);
    expect(directory.holders('a').map((h) => h.nodeId)).toEqual(inDirectory);
  });

  it('a node that leaves takes its expected holdings with it', () => {
    const { sut, expected } = setup();
    expected.record('n1', { chunkKeys: ['a'] }, Date.now());
    sut.nodeLeft('n1');
    expect(expected.stats(Date.now()).holdings).toBe(0);
  });

  it('a full report replaces what a missed event left stale', () => {
    const { directory, record } = setup();
    record(event('n1', 1, [[KvChangeKind.STORED, KvTier.HOST, ['a', 'b']]]));
    // Event 2 (b removed) was lost; event 3 shows the gap; the report is the truth.
    record(event('n1', 3, [[KvChangeKind.STORED, KvTier.SSD, ['c']]]));
    record(
      event(
        'n1',
        4,
        [
          [KvChangeKind.STORED, KvTier.HOST, ['a']],
          [KvChangeKind.STORED, KvTier.SSD, ['c']],
        ],
        true,
      ),
    );
    expect(directory.holders('b')).toEqual([]);
    expect(directory.holders('a')).toEqual([{ nodeId: 'n1', tier: 'host' }]);
    expect(directory.holders('c')).toEqual([{ nodeId: 'n1', tier: 'ssd' }]);
  });

  it('asks a report of a node that joins, once until it answers', () => {
    const { requester, sut, record } = setup();
    sut.nodeJoined('n2');
    record(event('n2', 9, []));
    expect(requester.asked).toEqual([['n2']]);
    record(event('n2', 10, [], true));
    sut.nodeJoined('n2');
    expect(requester.asked).toEqual([['n2'], ['n2']]);
  });

  it('forgets everything of a node that left', () => {
    const { directory, sut, record } = setup();
    record(event('n1', 1, [[KvChangeKind.STORED, KvTier.HOST, ['a']]]));
    sut.nodeLeft('n1');
    expect(directory.holders('a')).toEqual([]);
  });

  it('ignores changes with an unknown tier or kind, and node ids that are not subject tokens', () => {
    const { directory, record } = setup();
    record(
      event('n1', 1, [
        [KvChangeKind.STORED, KvTier.UNSPECIFIED, ['a']],
        [KvChangeKind.UNSPECIFIED, KvTier.HOST, ['b']],
      ]),
    );
    record(event('bad.id', 1, [[KvChangeKind.STORED, KvTier.HOST, ['c']]]));
    expect(directory.stats().keys).toBe(0);
  });

  describe('session tails', () => {
    const k = (c: string) => c.repeat(32);
    const tail = { tenant: 't', sessionId: 's', model: 'm', chunkKeys: [k('a'), k('b')], partialKey: k('c'), tokens: 2 * 256 + 48 };
    const withTail = (t: object, nodeId = 'n1') =>
      create(KvEventSchema, {
        nodeId,
        seq: 1n,
        changes: [{ kind: KvChangeKind.STORED, tier: KvTier.HOST, model: 'm', chunkKeys: [k('c')] }],
        sessionTails: [t],
      });

    it.each<[string, object, string, boolean]>([
      ['a whole and partial chain from the node that ran it', {}, 'applied', true],
      ['no partial chunk, tokens on a chunk boundary', { partialKey: '', tokens: 512 }, 'applied', true],
      ['a partial key but tokens on a boundary', { tokens: 512 }, 'invalid', false],
      ['tokens past the partial chunk', { tokens: 3 * 256 }, 'invalid', false],
      ['fewer tokens than the whole chunks', { tokens: 500 }, 'invalid', false],
      ['a key that is not a chunk key', { chunkKeys: [k('a'), 'nope'] }, 'invalid', false],
      ['no tenant', { tenant: '' }, 'invalid', false],
      ['an unknown session', { sessionId: 'other' }, 'stale', false],
    ])('%s → %s', async (_n, change, outcome, applied) => {
      const { record, sessions, metrics } = setup();
      sessions.record({ tenant: 't', sessionId: 's', model: 'm', nodeId: 'n1', chunkKeys: [k('a')], promptTokens: 400, lastUsedMs: 0 });
      record(withTail({ ...tail, ...change }));
      expect((await metrics.sessionTails.get()).values).toEqual([expect.objectContaining({ labels: { outcome }, value: 1 })]);
      const s = sessions.get('t', 's')!;
      expect(s.promptTokens).toBe(applied ? ({ ...tail, ...change } as typeof tail).tokens : 400);
    });

    it('a tail from a node the session has left changes nothing', () => {
      const { record, sessions, directory } = setup();
      sessions.record({ tenant: 't', sessionId: 's', model: 'm', nodeId: 'n2', chunkKeys: [k('a')], promptTokens: 400, lastUsedMs: 0 });
      record(withTail(tail, 'n1'));
      expect(sessions.get('t', 's')).toMatchObject({ nodeId: 'n2', chunkKeys: [k('a')], promptTokens: 400 });
      expect(directory.holders(k('c'))).toEqual([{ nodeId: 'n1', tier: 'host' }]);
    });
  });
});
