import { ErrorCode, type ReservationBook, type RoutingPolicyName } from '@mnemo/kv-core';
import { create } from '@bufbuild/protobuf';
import { InferenceRequestSchema, type InferenceRequest } from '@mnemo/proto';
import { nodeEntry, plannerFor, schedulerFor } from '../../test/route-planner.fixture.js';
import type { NodeEntry } from '../nodes/node.registry.js';
import type { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import type { DispatchOutcome, NodeDispatcher } from './node-dispatcher.port.js';
import { ScheduleInferenceCommand } from './schedule-inference.command.js';
import type { ForgetInit, NodePrefetcher, PrefetchOutcome } from '../sessions/node-prefetch.port.js';
import { MAX_DISPATCH_ATTEMPTS, ScheduleInferenceUseCase } from './schedule-inference.use-case.js';

/** Port double: answers per node from a table and records every call. */
class ScriptedDispatcher implements NodeDispatcher {
  readonly calls: string[] = [];
  readonly attempts: number[] = [];
  readonly cancels: string[] = [];
  readonly requests: InferenceRequest[] = [];
  constructor(private readonly answers: Record<string, DispatchOutcome | Error>) {}
  async dispatch(nodeId: string, request: InferenceRequest): Promise<DispatchOutcome> {
    this.calls.push(nodeId);
    this.attempts.push(request.attempt);
    this.requests.push(request);
    const a = this.answers[nodeId] ?? { kind: 'admitted', bootId: 'boot-' + nodeId };
    if (a instanceof Error) throw a;
    return a;
  }
  abandon(nodeId: string, requestId: string, attempt: number): void {
    this.cancels.push(`${nodeId}:${requestId}#${attempt}`);
  }
}

/** Port double: records forgets; prefetches are not this use case's. */
class RecordingPrefetcher implements NodePrefetcher {
  readonly forgets: string[] = [];
  async prefetch(): Promise<PrefetchOutcome> {
    return { kind: 'unavailable' };
  }
  async forget(nodeId: string, r: ForgetInit): Promise<PrefetchOutcome> {
    this.forgets.push(`${nodeId}:${r.advisoryId}`);
    return { kind: 'queued', chunks: 0 };
  }
}

const node = (nodeId: string, over: Partial<NodeEntry> = {}): NodeEntry =>
  nodeEntry(nodeId, {
    models: ['mnemo-tiny'],
    modelInfos: [{ id: 'mnemo-tiny', engine: 'sim', maxContext: 4096, vocabSize: 261, tokenizer: 'byte', tokenizerSha256: '' }],
    grpcAddress: '',
    ...over,
  });

const request = (over: Partial<Omit<InferenceRequest, '$typeName' | '$unknown'>> = {}): InferenceRequest =>
  create(InferenceRequestSchema, { requestId: 'r1', model: 'mnemo-tiny', tokens: [72, 105], replySubject: '_INBOX.1', ...over });

/** The advisory outcome counter's samples as `outcome/reason=count`. */
async function advisoryVerdicts(metrics: SchedulerMetrics): Promise<string[]> {
  const { values } = await metrics.advisoryOutcomes.get();
  return values.map((v) => `${v.labels.outcome}/${v.labels.reason}=${v.value}`).sort();
}

function setup(nodes: NodeEntry[], answers: Record<string, DispatchOutcome | Error> = {}, policy: RoutingPolicyName = 'symphony') {
  const planner = plannerFor(nodes, { env: { SCHEDULER_POLICY: policy }, sessions: 100, reservations: 100, service: 'scheduler-test' });
  const dispatcher = new ScriptedDispatcher(answers);
  const prefetcher = new RecordingPrefetcher();
  const sut = schedulerFor(planner, dispatcher, prefetcher);
  const { registry, directory, sessions, book, metrics } = planner;
  return { sut, registry, dispatcher, directory, sessions, book, prefetcher, metrics };
}

/** Session s1 of tenant t reserved on `nodeId` for mnemo-tiny, until `expiresAtMs`. */
function reserveS1(book: ReservationBook, nodeId: string, expectedAtMs: number, expiresAtMs: number): void {
  const advisory = { id: 'adv-1', tenant: 't', sessionId: 's1', model: 'mnemo-tiny', nodeId, expectedAtMs, expiresAtMs, priority: 0 };
  book.reserve(advisory, Date.now());
}

describe(ScheduleInferenceUseCase.name, () => {
  it('dispatches to the least-loaded node serving the model', async () => {
    const { sut, dispatcher } = setup([node('a', { running: 3 }), node('b', { running: 1 }), node('c', { models: ['other'] })]);
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).resolves.toMatchObject({ nodeId: 'b' });
    expect(dispatcher.calls).toEqual(['b']);
  });

  it('counts its own dispatches until the next heartbeat, so a burst spreads out', async () => {
    const { sut } = setup([node('a'), node('b')]);
    const picks = [];
    for (let i = 0; i < 4; i++) picks.push((await sut.execute(new ScheduleInferenceCommand(request({ requestId: `r${i}` })))).nodeId);
    expect(picks).toEqual(['a', 'b', 'a', 'b']);
  });

  it('spreads concurrent requests: a node counts as busier from the moment it is picked', async () => {
    const { sut } = setup([node('a'), node('b')]);
    const picks = await Promise.all([0, 1].map((i) => sut.execute(new ScheduleInferenceCommand(request({ requestId: `c${i}` })))));
    expect(new Set(picks.map((p) => p.nodeId))).toEqual(new Set(['a', 'b']));
  });

  it.each<[string, NodeEntry[], ErrorCode]>([
    ['no live node', [], ErrorCode.NoNodeAvailable],
    ['live nodes, none with the model', [node('a', { models: ['other'] })], ErrorCode.ModelNotFound],
  ])('%s → %s', async (_n, nodes, code) => {
    const { sut } = setup(nodes);
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).rejects.toMatchObject({ code });
  });

  it.each<[string, Partial<InferenceRequest>]>([
    ['missing request id', { requestId: '' }],
    ['missing model', { model: '' }],
    ['missing reply subject', { replySubject: '' }],
    ['empty prompt', { tokens: [] }],
  ])('rejects %s as invalid_request before routing', async (_n, over) => {
    const { sut, dispatcher } = setup([node('a')]);
    await expect(sut.execute(new ScheduleInferenceCommand(request(over)))).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
    expect(dispatcher.calls).toEqual([]);
  });

  it('drops an unreachable node and goes to the next one', async () => {
    const { sut, registry, dispatcher } = setup([node('a'), node('b', { running: 1 })], {
      a: { kind: 'unreachable', reason: 'no_responders' },
    });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).resolves.toMatchObject({ nodeId: 'b' });
    expect(dispatcher.calls).toEqual(['a', 'b']);
    expect(registry.get('a')).toBeUndefined();
    expect(dispatcher.cancels).toEqual([]);
  });

  it('numbers each dispatch and returns the attempt that was admitted', async () => {
    const { sut, dispatcher } = setup([node('a'), node('b', { running: 1 }), node('c', { running: 2 })], {
      a: { kind: 'unreachable', reason: 'no_responders' },
      b: { kind: 'refused', code: ErrorCode.Overloaded, message: 'full' },
    });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).resolves.toEqual({ nodeId: 'c', attempt: 3, bootId: 'boot-c' });
    expect(dispatcher.calls).toEqual(['a', 'b', 'c']);
    expect(dispatcher.attempts).toEqual([1, 2, 3]);
  });

  it('abandons the attempt on a node that timed out, in case it admits late', async () => {
    const { sut, dispatcher } = setup([node('a'), node('b', { running: 1 })], { a: { kind: 'unreachable', reason: 'timeout' } });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).resolves.toEqual({ nodeId: 'b', attempt: 2, bootId: 'boot-b' });
    expect(dispatcher.cancels).toEqual(['a:r1#1']);
  });

  it('skips an overloaded node but keeps it registered', async () => {
    const { sut, registry } = setup([node('a'), node('b', { running: 1 })], {
      a: { kind: 'refused', code: ErrorCode.Overloaded, message: 'full' },
    });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).resolves.toMatchObject({ nodeId: 'b' });
    expect(registry.get('a')).toBeDefined();
  });

  it('returns a node refusal about the request itself without trying others', async () => {
    const { sut, dispatcher } = setup([node('a'), node('b', { running: 1 })], {
      a: { kind: 'refused', code: ErrorCode.PromptTooLong, message: 'long' },
    });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).rejects.toMatchObject({ code: ErrorCode.PromptTooLong });
    expect(dispatcher.calls).toEqual(['a']);
  });

  it('maps an unknown refusal code to internal', async () => {
    const { sut } = setup([node('a')], { a: { kind: 'refused', code: 'weird', message: '?' } });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).rejects.toMatchObject({ code: ErrorCode.Internal });
  });

  it(`gives up with no_node_available after ${MAX_DISPATCH_ATTEMPTS} unreachable nodes`, async () => {
    const ids = ['a', 'b', 'c', 'd'];
    const answers = Object.fromEntries(ids.map((id) => [id, { kind: 'unreachable', reason: 'timeout' } as DispatchOutcome]));
    const { sut, dispatcher } = setup(
      ids.map((id) => node(id)),
      answers,
    );
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
    expect(dispatcher.calls).toHaveLength(MAX_DISPATCH_ATTEMPTS);
  });

  it('reports no_node_available when every node with the model was unreachable', async () => {
    const { sut } = setup([node('a'), node('b', { models: ['other'] })], { a: { kind: 'unreachable', reason: 'no_responders' } });
    await expect(sut.execute(new ScheduleInferenceCommand(request()))).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
  });

  describe('what a dispatch reserved (pending, prefill backlog, expected KV)', () => {
    const long = () => request({ tokens: Array.from({ length: 2560 }, (_, i) => i % 200) });
    it.each<[string, DispatchOutcome | Error, 'resolves' | 'rejects']>([
      ['refused as overloaded (another node takes it)', { kind: 'refused', code: ErrorCode.Overloaded, message: 'full' }, 'resolves'],
      ['refused for the request itself', { kind: 'refused', code: ErrorCode.PromptTooLong, message: 'long' }, 'rejects'],
      ['not sent (NATS reconnecting; another node takes it)', { kind: 'failed', reason: 'CONNECTION_CLOSED' }, 'resolves'],
      ['a dispatcher that throws', new Error('bug'), 'rejects'],
    ])('is given back when the node does not take it: %s', async (_n, answer, how) => {
      const { sut, registry } = setup([node('a'), node('b', { running: 5 })], { a: answer });
      const outcome = sut.execute(new ScheduleInferenceCommand(long()));
      if (how === 'resolves') await expect(outcome).resolves.toMatchObject({ nodeId: 'b' });
      else await expect(outcome).rejects.toBeDefined();
      expect(registry.get('a')).toMatchObject({ waiting: 0 });
      expect(registry.backlogOf('a', Date.now())).toBe(0);
    });

    it('stays with the node that admitted it', async () => {
      const { sut, registry } = setup([node('a')]);
      await sut.execute(new ScheduleInferenceCommand(long()));
      expect(registry.get('a')).toMatchObject({ waiting: 1 });
      expect(registry.backlogOf('a', Date.now())).toBeGreaterThan(0);
    });

    it('a failed send keeps the node registered', async () => {
      const { sut, registry } = setup([node('a')], { a: { kind: 'failed', reason: 'CONNECTION_CLOSED' } });
      await expect(sut.execute(new ScheduleInferenceCommand(request()))).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
      expect(registry.get('a')).toBeDefined();
    });
  });

  it('numbers a failover re-dispatch on from the attempt the gateway names', async () => {
    const { sut, dispatcher } = setup([node('a'), node('b', { running: 1 })], { a: { kind: 'unreachable', reason: 'no_responders' } });
    await expect(sut.execute(new ScheduleInferenceCommand(request({ attempt: 4 })))).resolves.toEqual({
      nodeId: 'b',
      attempt: 6,
      bootId: 'boot-b',
    });
    expect(dispatcher.attempts).toEqual([5, 6]);
  });

  describe('KV-aware routing', () => {
    const keys = ['k0', 'k1', 'k2'];

    it('stamps kv_sources: the peers holding the prefix the chosen node lacks, with their addresses', async () => {
      const { sut, dispatcher, directory } = setup([node('a', { waiting: 3, grpcAddress: '10.0.0.1:7000' }), node('b')]);
      directory.apply('a', [{ kind: 'stored', tier: 'host', keys }]);
      await expect(sut.execute(new ScheduleInferenceCommand(request({ chunkKeys: keys })))).resolves.toMatchObject({ nodeId: 'b' });
      expect(
        dispatcher.requests[0]!.kvSources.map((s) => ({ nodeId: s.nodeId, grpcAddress: s.grpcAddress, chunkKeys: s.chunkKeys })),
      ).toEqual([{ nodeId: 'a', grpcAddress: '10.0.0.1:7000', chunkKeys: keys }]);
    });

    it('remembers the session on the node that admitted it, and sticky sends its next request there', async () => {
      const { sut, sessions, registry } = setup([node('a'), node('b')], {}, 'sticky');
      await sut.execute(new ScheduleInferenceCommand(request({ tenant: 't', sessionId: 's1' })));
      expect(sessions.get('t', 's1')).toMatchObject({ nodeId: 'a', requests: 1, promptTokens: 2 });
      registry.addPending('a', 5);
      await expect(
        sut.execute(new ScheduleInferenceCommand(request({ requestId: 'r2', tenant: 't', sessionId: 's1' }))),
      ).resolves.toMatchObject({ nodeId: 'a' });
    });

    it.each<[string, number, Record<string, DispatchOutcome>, string, string[], string[]]>([
      [
        'goes to the reserved node (symphony), busier by its own reservation (inside the move margin), and spends it (the node judges it)',
        0,
        {},
        'b',
        [],
        [],
      ],
      [
        'the reserved node is four requests busier (past the move margin): runs ' +
          'elsewhere, the reserved node is told to forget, and the advisory missed',
        4,
        {},
        'a',
        ['b:adv-1'],
        ['missed/moved=1'],
      ],
      [
        'the reserved node refuses: runs elsewhere, the reserved node is told to forget, and the advisory missed',
        0,
        { b: { kind: 'refused', code: ErrorCode.Overloaded, message: 'full' } },
        'a',
        ['b:adv-1'],
        ['missed/moved=1'],
      ],
    ])('a live reservation: %s', async (_n, busy, answers, expected, forgets, verdicts) => {
      const { sut, book, prefetcher, metrics } = setup([node('a'), node('b', { waiting: busy })], answers);
      reserveS1(book, 'b', Date.now(), Date.now() + 60_000);
      await expect(sut.execute(new ScheduleInferenceCommand(request({ tenant: 't', sessionId: 's1' })))).resolves.toMatchObject({
        nodeId: expected,
      });
      expect(book.size).toBe(0);
      await new Promise((r) => setImmediate(r));
      expect(prefetcher.forgets).toEqual(forgets);
      expect(await advisoryVerdicts(metrics)).toEqual(verdicts);
    });

    it(
      'a request moved off its reserved node that pulls its KV from what that node prefetched: ' +
        'the node is not told to forget (the forget would drop the source as the pull begins)',
      async () => {
        const keys = ['k0', 'k1', 'k2'];
        const { sut, book, prefetcher, directory, dispatcher, metrics } = setup([
          node('a'),
          node('b', { waiting: 4, grpcAddress: '10.0.0.2:7000' }),
        ]);
        directory.apply('b', [{ kind: 'stored', tier: 'host', keys }]);
        reserveS1(book, 'b', Date.now(), Date.now() + 60_000);
        await expect(
          sut.execute(new ScheduleInferenceCommand(request({ tenant: 't', sessionId: 's1', chunkKeys: keys }))),
        ).resolves.toMatchObject({ nodeId: 'a' });
        expect(dispatcher.requests[0]!.kvSources.map((x) => x.nodeId)).toEqual(['b']);
        await new Promise((r) => setImmediate(r));
        expect(prefetcher.forgets).toEqual([]);
        expect(book.size).toBe(0);
        expect(await advisoryVerdicts(metrics)).toEqual(['missed/moved=1']);
        const { values } = await metrics.nodeForgets.get();
        expect(values.map((v) => `${v.labels.outcome}=${v.value}`)).toEqual(['kept_as_source=1']);
      },
    );

    it('a reservation that expires unreleased counts as a spurious advisory, once', async () => {
      const { book, metrics } = setup([node('a')]);
      metrics.observeAdvisoryExpiries(() => {
        book.sweep(Date.now());
        return book.expiredTotal;
      });
      reserveS1(book, 'a', 0, Date.now() + 20);
      expect(await advisoryVerdicts(metrics)).toEqual([]);
      await new Promise((r) => setTimeout(r, 40));
      expect(await advisoryVerdicts(metrics)).toEqual(['spurious/expired=1']);
      expect(await advisoryVerdicts(metrics)).toEqual(['spurious/expired=1']);
    });

    it.each<[RoutingPolicyName]>([['recompute'], ['symphony']])(
      '%s: a long prefill just sent to a node keeps the next request off it until it should be done',
      async (policy) => {
        const { sut } = setup([node('a'), node('b', { running: 1 })], {}, policy);
        // 2,560 uncached tokens: 10 chunks of 15.9 ms by default, about 6 queued requests' worth.
        await expect(
          sut.execute(new ScheduleInferenceCommand(request({ tokens: Array.from({ length: 2560 }, (_, i) => i % 200) }))),
        ).resolves.toMatchObject({ nodeId: 'a' });
        // a: 1 pending + the backlog; b: 1 running. Without the backlog the tie would go to a.
        await expect(sut.execute(new ScheduleInferenceCommand(request({ requestId: 'r2' })))).resolves.toMatchObject({ nodeId: 'b' });
      },
    );

    it('another policy ignores the reservation (baselines do not take advisories)', async () => {
      const { sut, book } = setup([node('a'), node('b', { running: 4 })], {}, 'recompute');
      reserveS1(book, 'b', Date.now(), Date.now() + 60_000);
      await expect(sut.execute(new ScheduleInferenceCommand(request({ tenant: 't', sessionId: 's1' })))).resolves.toMatchObject({
        nodeId: 'a',
      });
    });

    it('does not record a session on a refusal', async () => {
      const { sut, sessions } = setup([node('a')], { a: { kind: 'refused', code: ErrorCode.PromptTooLong, message: 'long' } });
      await expect(sut.execute(new ScheduleInferenceCommand(request({ sessionId: 's1' })))).rejects.toMatchObject({
        code: ErrorCode.PromptTooLong,
      });
      expect(sessions.size).toBe(0);
    });
  });
});
