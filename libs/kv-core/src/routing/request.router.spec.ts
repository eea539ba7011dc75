import { chunkKeys } from '../keys/chunk-key.hasher.js';
import { KvDirectory } from '../directory/kv.directory.js';
import { ReservationBook } from '../sessions/reservation.book.js';
import { SessionTable } from '../sessions/session.table.js';
import { planAdvisory, planRoute, routePrefillMs, routeRestoreMs, type RoutingState } from './request.router.js';
import { DEFAULT_ROUTING_COSTS, type RoutingPolicyName } from './route.types.js';
import { reportedPrefillMs } from './node-load.js';

const M = 'm';
const tokens = Array.from({ length: 3 * 256 + 40 }, (_, i) => (i * 7) % 250);
const keys = chunkKeys(M, 't', tokens);
const node = (nodeId: string, running: number) => ({ nodeId, models: [M], running, waiting: 0, kvUsage: 0, lastSeenMs: 0 });
const nodes = [node('a', 0), node('b', 3), node('c', 1)];

function state(policy: RoutingPolicyName, over: Partial<RoutingState> = {}) {
  const directory = new KvDirectory(1000);
  const sessions = new SessionTable(10);
  const book = new ReservationBook({ perTenant: 10, total: 10 });
  const s: RoutingState = {
    policy,
    costs: DEFAULT_ROUTING_COSTS,
    prefixes: (k) => directory.prefixes(k),
    holders: (k) => directory.holders(k),
    reservationsOn: (id, now) => book.onNode(id, now),
    backlogMs: () => 0,
    session: (t, id) => sessions.get(t, id),
    reservation: (t, id, now) => book.forSession(t, id, now),
    ...over,
  };
  return { s, directory, sessions, book };
}
const request = { model: M, tenant: 't', sessionId: 's1', tokens, chunkKeys: keys };

describe(planRoute.name, () => {
  it.each<[string, RoutingPolicyName, boolean, string]>([
    ['recompute: least loaded', 'recompute', false, 'a'],
    ['sticky: the session home', 'sticky', true, 'b'],
    ['sticky without a session: least loaded', 'sticky', false, 'a'],
    ['prefix-affinity: the longest prefix', 'prefix-affinity', false, 'b'],
  ])('%s', (_name, policy, withSession, want) => {
    const { s, directory, sessions } = state(policy);
    directory.apply('b', [{ kind: 'stored', tier: 'host', keys }]);
    if (withSession)
      sessions.record({ tenant: 't', sessionId: 's1', model: M, nodeId: 'b', chunkKeys: keys, promptTokens: tokens.length, lastUsedMs: 0 });
    expect(planRoute(s, nodes, request, new Set(), 0)?.nodeId).toBe(want);
  });

  it('leaves out excluded nodes and answers null when none serves the model', () => {
    const { s } = state('recompute');
    expect(planRoute(s, nodes, request, new Set(['a']), 0)?.nodeId).toBe('c');
    expect(planRoute(s, nodes, { ...request, model: 'other' }, new Set(), 0)).toBeNull();
  });

  it('takes a prompt just routed as the session home of a request with no known session', () => {
    const { s } = state('sticky', { recordedHome: () => 'c' });
    expect(planRoute(s, nodes, { ...request, sessionId: '' }, new Set(), 0)?.nodeId).toBe('c');
  });

  it.each<[string, RoutingPolicyName]>([
    ['symphony', 'symphony'],
    ['least-loaded (recompute)', 'recompute'],
  ])('%s: other sessions’ reservations are not ahead of a request that runs now (they count at advisory time)', (_name, policy) => {
    const { s, book } = state(policy);
    // a is idle but five users are typing there; c runs one request.
    for (let i = 0; i < 5; i++)
      book.reserve(
        { id: `r${i}`, tenant: 't', sessionId: `o${i}`, model: M, nodeId: 'a', expectedAtMs: 5_000, expiresAtMs: 10_000, priority: 0 },
        0,
      );
    const plan = planRoute(s, nodes, { ...request, sessionId: 'new' }, new Set(), 0)!;
    expect(plan.nodeId).toBe('a');
  });

  it("returns the session's live reservation and prices the prefill past what the node holds", () => {
    const { s, directory, book } = state('symphony');
    directory.apply('a', [{ kind: 'stored', tier: 'device', keys: keys.slice(0, 2) }]);
    book.reserve({ id: 'r1', tenant: 't', sessionId: 's1', model: M, nodeId: 'a', expectedAtMs: 0, expiresAtMs: 10_000, priority: 0 }, 0);
    const plan = planRoute(s, nodes, request, new Set(), 0)!;
    expect(plan.nodeId).toBe('a');
    expect(plan.reservation?.id).toBe('r1');
    expect(plan.prefillMs).toBeCloseTo(((tokens.length - 512) / 256) * DEFAULT_ROUTING_COSTS.recomputeMsPerChunk, 9);
  });
});

describe(reportedPrefillMs.name, () => {
  it.each<[string, number | undefined, number, number]>([
    ['not reported', undefined, 0, 0],
    ['as reported, right away', 800, 0, 800],
    ['less what has passed since the heartbeat', 800, 300, 500],
    ['never below 0', 800, 1000, 0],
    ['nonsense reads as nothing', NaN, 0, 0],
  ])('%s', (_name, busy, since, want) => {
    expect(reportedPrefillMs({ prefillBusyMs: busy, lastSeenMs: 1000 }, 1000 + since)).toBe(want);
  });

  it('a node busy with a prefill it reported loses the session home to an idle one (the scheduler sent it nothing)', () => {
    const { s, sessions } = state('symphony');
    sessions.record({ tenant: 't', sessionId: 's1', model: M, nodeId: 'a', chunkKeys: [], promptTokens: 0, lastUsedMs: 0 });
    const idle = [node('a', 0), node('c', 0)];
    expect(planRoute(s, idle, request, new Set(), 0)?.nodeId).toBe('a');
    const busy = [{ ...node('a', 0), prefillBusyMs: 4000 }, node('c', 0)];
    expect(planRoute(s, busy, request, new Set(), 100)?.nodeId).toBe('c');
    expect(planRoute(s, busy, request, new Set(), 100)?.candidates?.find((c) => c.nodeId === 'a')?.queueMs).toBeGreaterThanOrEqual(3900);
  });
});

describe(routeRestoreMs.name, () => {
  it.each<[string, string[], number, number]>([
    ['device-held chunks cost nothing to load', ['device', 'device'], 0, 0],
    ['host and SSD chunks at their load cost', ['host', 'ssd'], 0, 2 + 6],
    ['fetched chunks at a host read plus the pull', [], 3, 3 * (2 + 3)],
  ])('%s', (_name, tiers, fetched, ms) => {
    const d = {
      nodeId: 'a',
      reason: 'cheapest' as const,
      kvSources: fetched ? [{ nodeId: 'b', chunkKeys: Array.from({ length: fetched }, (_, i) => `k${i}`) }] : [],
      estimateMs: 0,
    };
    const costs = { ...DEFAULT_ROUTING_COSTS, loadMsPerChunk: { device: 0, host: 2, ssd: 6 }, peerMsPerChunk: 3 };
    expect(routeRestoreMs(d, [{ nodeId: 'a', prefixChunks: tiers.length, tiers: tiers as never }], costs)).toBe(ms);
  });
});

describe(routePrefillMs.name, () => {
  it('counts the local prefix and the chunks fetched from peers as covered', () => {
    const d = { nodeId: 'a', reason: 'cheapest' as const, kvSources: [{ nodeId: 'b', chunkKeys: ['k'] }], estimateMs: 0 };
    expect(
      routePrefillMs(1024, d, [{ nodeId: 'a', prefixChunks: 2, tiers: ['host', 'host'] }], {
        ...DEFAULT_ROUTING_COSTS,
        recomputeMsPerChunk: 10,
      }),
    ).toBe(10);
  });

  it('prices a long prompt with attention over its context: the backlog of a long prefill is not cut to its length', () => {
    const d = { nodeId: 'a', reason: 'cheapest' as const, kvSources: [], estimateMs: 0 };
    const costs = { ...DEFAULT_ROUTING_COSTS, recomputeMsPerChunk: 10, attentionMsPerChunkPair: 0.1 };
    // 200 chunks from scratch: 10·200 + 0.1·200²/2; after a 100-chunk prefix: 10·100 + 0.1·(200² − 100²)/2.
    expect(routePrefillMs(200 * 256, d, [], costs)).toBeCloseTo(4000, 9);
    expect(routePrefillMs(200 * 256, d, [{ nodeId: 'a', prefixChunks: 100, tiers: Array(100).fill('host') }], costs)).toBeCloseTo(2500, 9);
  });
});

describe(planAdvisory.name, () => {
  const session = {
    tenant: 't',
    sessionId: 's1',
    model: M,
    nodeId: 'b',
    chunkKeys: keys,
    promptTokens: tokens.length,
    requests: 1,
    lastUsedMs: 0,
  };

  it.each<[string, number, number]>([
    ['an expected arrival ahead is kept', 5_000, 5_000],
    ['one in the past is now', 10, 1_000],
    ['one too far ahead is clamped', 10_000_000, 1_000 + 60_000],
    ['none given is now', 0, 1_000],
  ])('%s', (_name, expected, arrival) => {
    const { s } = state('symphony');
    expect(
      planAdvisory(s, nodes, session, { tenant: 't', sessionId: 's1', model: M, expectedArrivalMs: expected }, 1_000, 60_000)?.arrivalMs,
    ).toBe(arrival);
  });

  it("reserves by the policy and names the peers holding the session's chunks", () => {
    const { s, directory } = state('recompute');
    directory.apply('b', [{ kind: 'stored', tier: 'host', keys }]);
    const plan = planAdvisory(s, nodes, session, { tenant: 't', sessionId: 's1', model: M, expectedArrivalMs: 0 }, 0, 60_000)!;
    expect(plan.nodeId).toBe('a');
    expect(plan.chunkKeys).toEqual(keys);
    expect(plan.sources).toEqual([{ nodeId: 'b', chunkKeys: keys }]);
  });

  it('no node: null', () => {
    expect(
      planAdvisory(state('symphony').s, [], session, { tenant: 't', sessionId: 's1', model: M, expectedArrivalMs: 0 }, 0, 1),
    ).toBeNull();
  });
});
