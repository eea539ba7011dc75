import { chunkKeys, ErrorCode, ExpectedHoldings, type RoutingPolicyName } from '@mnemo/kv-core';
import type { InferenceRequest } from '@mnemo/proto';
import { ManualClock } from '@mnemo/service-kit';
import { chunkedRequest, nodeEntry, plannerFor, schedulerFor } from '../../test/route-planner.fixture.js';
import type { NodePrefetcher } from '../sessions/node-prefetch.port.js';
import type { DispatchOutcome, NodeDispatcher } from './node-dispatcher.port.js';
import { RoutePlanner } from './route.planner.js';
import { ScheduleInferenceCommand } from './schedule-inference.command.js';

const MODEL = 'mnemo-tiny';
const toks = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 29 + seed * 13) % 250);

/** Port double: answers per node from a table (changeable between calls) and records every call. */
class ScriptedDispatcher implements NodeDispatcher {
  readonly requests: Array<{ nodeId: string; request: InferenceRequest }> = [];
  constructor(readonly answers: Record<string, DispatchOutcome> = {}) {}
  async dispatch(nodeId: string, request: InferenceRequest): Promise<DispatchOutcome> {
    this.requests.push({ nodeId, request });
    return this.answers[nodeId] ?? { kind: 'admitted', bootId: '' };
  }
  abandon(): void {}
}

/** Scheduler time: a turn ends some time after it was routed (its prefill backlog has drained), its node's next heartbeat not yet come. */
const noPrefetch: NodePrefetcher = { prefetch: async () => ({ kind: 'unavailable' }), forget: async () => ({ kind: 'unavailable' }) };

function setup(opts: { policy?: RoutingPolicyName; expected?: boolean; running?: Record<string, number> } = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const expected = opts.expected === false ? null : new ExpectedHoldings(1000, 30_000);
  const nodes = ['a', 'b'].map((id) => nodeEntry(id, { models: [MODEL], running: opts.running?.[id] ?? 0 }));
  const planner = plannerFor(nodes, {
    env: { SCHEDULER_POLICY: opts.policy ?? 'symphony' },
    clock,
    expected,
    service: 'planner-expected-test',
  });
  const { registry, directory, metrics, service } = planner;
  if (expected) metrics.observeExpected(() => expected.stats(clock.unix));
  const dispatcher = new ScriptedDispatcher();
  const sut = schedulerFor(planner, dispatcher, noPrefetch, expected);
  let n = 0;
  const send = async (tokens: number[]) => {
    clock.advance(500);
    return (await sut.execute(new ScheduleInferenceCommand(chunkedRequest(`r${++n}`, MODEL, tokens)))).nodeId;
  };
  return { sut, send, registry, directory, expected, dispatcher, service, clock };
}

// A conversation sent back to back without a session id: each turn extends the last one's prompt.
const turn1 = toks(100, 1);
const turn2 = [...turn1, ...toks(150, 2)];

describe(`${RoutePlanner.name} (expected holdings)`, () => {
  it.each<[string, RoutingPolicyName, boolean, string]>([
    [
      'symphony: a follow-up of a 100-token first turn (no whole chunk) stays with it, its node busier by the first turn',
      'symphony',
      true,
      'a',
    ],
    ['symphony without expected holdings: nothing says where the first turn is, load decides', 'symphony', false, 'b'],
    ['sticky: the prompt it extends stands for the session', 'sticky', true, 'a'],
    ['recompute ignores KV', 'recompute', true, 'b'],
    ['prefix-affinity: no whole chunk, no prefix', 'prefix-affinity', true, 'b'],
  ])('%s', async (_name, policy, expected, node2) => {
    const { send } = setup({ policy, expected });
    // Both idle: the first turn goes to a, which then counts it as queued until its next heartbeat.
    expect(await send(turn1)).toBe('a');
    expect(await send(turn2)).toBe(node2);
  });

  it('still weighs load: a home busier by more than the move margin loses the follow-up', async () => {
    const { send, registry } = setup();
    expect(await send(turn1)).toBe('a');
    registry.addPending('a', 3);
    expect(await send(turn2)).toBe('b');
  });

  it("a follow-up routed before the first turn's KV events goes to its chunks, or is sent to fetch them from there", async () => {
    const long1 = toks(600, 3);
    const long2 = [...long1, ...toks(100, 4)];
    const { send, registry, dispatcher } = setup();
    expect(await send(long1)).toBe('a');
    expect(await send(long2)).toBe('a');
    registry.addPending('a', 4);
    expect(await send([...long2, ...toks(50, 5)])).toBe('b');
    expect(dispatcher.requests.at(-1)!.request.kvSources.map((s) => ({ nodeId: s.nodeId, chunkKeys: s.chunkKeys }))).toEqual([
      { nodeId: 'a', chunkKeys: chunkKeys(MODEL, 't', long2) },
    ]);
  });

  it('a refused dispatch takes its expectation back: the prompt is expected only where it ran', async () => {
    const { send, dispatcher, expected, clock } = setup();
    dispatcher.answers.a = { kind: 'refused', code: ErrorCode.Overloaded, message: 'full' };
    const long1 = toks(300, 6);
    expect(await send(long1)).toBe('b');
    expect(expected!.holders(chunkKeys(MODEL, 't', long1)[0]!, clock.unix)).toEqual(['b']);
    expect(expected!.longestRecordedPrompt(MODEL, 't', [...long1, 1, 2, 3], chunkKeys(MODEL, 't', long1), clock.unix)?.nodeId).toBe('b');
  });

  it('exports the expected holdings and counts lookups that found one', async () => {
    const { send, service } = setup();
    await send(turn1);
    await send(turn2);
    const text = await service.registry.metrics();
    expect(text).toMatch(/mnemo_scheduler_kv_directory_expected_holdings\{[^}]*\} 2\n/);
    expect(text).toMatch(/mnemo_scheduler_kv_directory_expected_lookups_total\{[^}]*outcome="miss"[^}]*\} 1\n/);
    expect(text).toMatch(/mnemo_scheduler_kv_directory_expected_lookups_total\{[^}]*outcome="hit"[^}]*\} 1\n/);
  });
});
