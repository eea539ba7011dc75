import type { NodePrefix } from '../directory/kv-directory.types.js';
import { candidate, heldIn, ROUND_COSTS } from '../testing/route.candidates.js';
import { KvDirectory } from '../directory/kv.directory.js';
import { route } from './route.policies.js';
import { DEFAULT_ROUTING_COSTS, type RouteCandidate, type RouteRequest, type RoutingCosts, type RoutingPolicyName } from './route.types.js';

const node = candidate;
const held = heldIn;
const KEYS = ['k0', 'k1', 'k2', 'k3'];
const req = (over: Partial<RouteRequest> = {}): RouteRequest => ({ model: 'm', chunkKeys: KEYS, prefixes: [], ...over });
const costs = ROUND_COSTS;
/** The request's four chunks, all on a's device. */
const ALL_ON_A = [held('a', 'device', 'device', 'device', 'device')];
/** a is home to a session whose prompt is those four chunks and a 192-token tail. */
const homeOnA = (over: Partial<RouteRequest> = {}): RouteRequest =>
  req({ prefixes: ALL_ON_A, sessionHome: 'a', promptTokens: 4 * 256 + 192, ...over });
/** The request holds a reservation on b, which prefetched its prefix to host (4·2 = 8 to load). */
const RESERVED_ON_B = req({ reservedNode: 'b', prefixes: [held('b', 'host', 'host', 'host', 'host')] });

type Row = [string, RoutingPolicyName, RouteCandidate[], RouteRequest, string | null, string];

describe(route.name, () => {
  // With a margin of one queued request (20 ms), a session leaves its home only for a clear gain.
  it.each<[string, RouteCandidate[], RouteRequest, string, string]>([
    [
      'home two requests busier: b (4 chunks from a peer 12 + tail 12 = 24) would save 40 - 24 = 16 ms, inside the margin → stays',
      [node('a', { waiting: 2 }), node('b')],
      homeOnA(),
      'a',
      'session_home',
    ],
    [
      'home three requests busier: b saves 60 - 24 = 36 ms, past the margin → moves',
      [node('a', { waiting: 3 }), node('b')],
      homeOnA(),
      'b',
      'moved_queue',
    ],
    ['no live home: the margin does not apply', [node('a', { waiting: 1 }), node('b')], homeOnA({ sessionHome: 'gone' }), 'b', 'cheapest'],
    [
      'the home is already the cheapest: nothing to weigh',
      [node('a'), node('b', { waiting: 1 })],
      req({ sessionHome: 'a' }),
      'a',
      'session_home',
    ],
    // A reservation weighs like a home: b prefetched the prefix to host (4·2 = 8); a would pull it from b (4·(2+3) = 20).
    [
      'reserved node a request busier: 20 + 8 = 28 against a’s 20, inside the margin → honoured',
      [node('a'), node('b', { waiting: 1 })],
      RESERVED_ON_B,
      'b',
      'reservation',
    ],
    [
      'reserved node with 150 ms of prefill backlog: 158 against 20 → the request goes where it starts first',
      [node('a'), node('b', { backlogMs: 150 })],
      RESERVED_ON_B,
      'a',
      'moved_queue',
    ],
    ['reserved node is the cheapest anyway', [node('a', { waiting: 1 }), node('b')], RESERVED_ON_B, 'b', 'reservation'],
    [
      'the reservation being used is this request, not load on its node: 20 + 5 + 8 = 33 against 20 → honoured',
      [node('a'), node('b', { waiting: 1, reservations: 1, backlogMs: 5 })],
      RESERVED_ON_B,
      'b',
      'reservation',
    ],
    [
      'another session’s reservation on it still counts: 20 + 10 + 10 + 8 = 48 against 20 → moved',
      [node('a'), node('b', { waiting: 1, reservations: 2, backlogMs: 10 })],
      RESERVED_ON_B,
      'a',
      'moved_queue',
    ],
  ])('symphony move margin: %s', (_n, nodes, r, expected, reason) => {
    const d = route('symphony', nodes, r, { ...costs, moveMarginMs: 20 })!;
    expect([d.nodeId, d.reason]).toEqual([expected, reason]);
  });

  it.each<Row>([
    ['no node serves the model', 'symphony', [node('a', { models: ['x'] })], req(), null, ''],
    // recompute: KV is ignored
    [
      'recompute: least loaded, although b holds the whole prefix',
      'recompute',
      [node('a'), node('b', { waiting: 1 })],
      req({ prefixes: [held('b', 'device', 'device', 'device', 'device')] }),
      'a',
      'least_loaded',
    ],
    [
      'recompute: reservations count as load',
      'recompute',
      [node('a', { reservations: 4 }), node('b', { waiting: 1 })],
      req(),
      'b',
      'least_loaded',
    ],
    // sticky: the session stays home, whatever the load
    [
      'sticky: the session home, however busy',
      'sticky',
      [node('a'), node('b', { waiting: 9 })],
      req({ sessionHome: 'b' }),
      'b',
      'session_home',
    ],
    [
      'sticky: home gone → least loaded',
      'sticky',
      [node('a', { waiting: 2 }), node('b')],
      req({ sessionHome: 'dead' }),
      'b',
      'least_loaded',
    ],
    [
      'sticky: home does not serve the model → least loaded',
      'sticky',
      [node('a', { models: ['x'] }), node('b')],
      req({ sessionHome: 'a' }),
      'b',
      'least_loaded',
    ],
    // prefix-affinity: the longest prefix wins, load only breaks ties
    [
      'prefix-affinity: longest prefix, however busy',
      'prefix-affinity',
      [node('a'), node('b', { waiting: 9 })],
      req({ prefixes: [held('a', 'host'), held('b', 'ssd', 'ssd')] }),
      'b',
      'longest_prefix',
    ],
    [
      'prefix-affinity: equal prefixes → less loaded',
      'prefix-affinity',
      [node('a', { waiting: 3 }), node('b', { waiting: 1 })],
      req({ prefixes: [held('a', 'host'), held('b', 'host')] }),
      'b',
      'longest_prefix',
    ],
    [
      'prefix-affinity: nothing cached → least loaded',
      'prefix-affinity',
      [node('a', { waiting: 1 }), node('b')],
      req(),
      'b',
      'least_loaded',
    ],
    // symphony
    [
      'recompute: prefill backlog counts as load (50 ms = 2.5 queued requests)',
      'recompute',
      [node('a', { backlogMs: 50 }), node('b', { waiting: 2 })],
      req(),
      'b',
      'least_loaded',
    ],
    [
      'symphony: prefill backlog counts in the estimate',
      'symphony',
      [node('a', { backlogMs: 30 }), node('b', { waiting: 1 })],
      req(),
      'b',
      'cheapest',
    ],
    [
      'symphony: a reservation on a dead node is ignored',
      'symphony',
      [node('a'), node('b', { waiting: 1 })],
      req({ reservedNode: 'gone' }),
      'a',
      'cheapest',
    ],
    // a: 20·1 + 4·0 = 20; b: 0 + 4·min(16, 0+3) = 12 → b, moving beats queueing
    [
      'symphony: an idle node pulling the prefix beats queueing where it lives',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      req({ prefixes: ALL_ON_A }),
      'b',
      'cheapest',
    ],
    // a: 20·1 + 0 = 20; b: 0 + 4·16 = 64 (no peer fetch) → a, recomputing costs more than one request of queue
    [
      'symphony: without peer fetch a long prefix keeps the request where it lives',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      req({ prefixes: ALL_ON_A }),
      'a',
      'cheapest',
    ],
    // a: 20·3 + 0 = 60; b: 0 + 64 = 64 (peer fetch off) → a; at running 4: 80 vs 64 → b
    [
      'symphony: queue long enough → recompute elsewhere',
      'symphony',
      [node('a', { waiting: 4 }), node('b')],
      req({ prefixes: ALL_ON_A }),
      'b',
      'cheapest',
    ],
    // a holds on SSD: 4·6 = 24 + 0; b holds on host: 4·2 = 8 + 20·0.5 reservation = 18 → b
    // 4 chunks + 128 tail tokens. a (home): 20·1 + 0 = 20; b: 0 + 4·3 (peer) + 0.5·16 (tail only a holds) = 20 → tie → b (less loaded);
    // with a 192-token tail b pays 12 + 12 = 24 > 20 → a
    [
      'symphony: a partial-chunk tail only the home holds tips a close call home',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      homeOnA(),
      'a',
      'session_home',
    ],
    [
      'symphony: a short tail does not outweigh a clearly shorter queue',
      'symphony',
      [node('a', { waiting: 2 }), node('b')],
      homeOnA(),
      'b',
      'moved_queue',
    ],
    // Same 192-token tail, now as a partial chunk the home keeps: b fetches it instead, min(12, load + 3).
    [
      'symphony: the home’s partial chunk on host moves with the session: b pays 12 + (2 + 3) = 17 < 20',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      homeOnA({ partialHolders: [{ nodeId: 'a', tier: 'host' }] }),
      'b',
      'moved_queue',
    ],
    [
      'symphony: a partial only on the home’s SSD saves too little: b pays 12 + (6 + 3) = 21 > 20',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      homeOnA({ partialHolders: [{ nodeId: 'a', tier: 'ssd' }] }),
      'a',
      'session_home',
    ],
    [
      'symphony: a partial b keeps itself is a local load: 12 + 6 = 18 < 20',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      homeOnA({
        partialHolders: [
          { nodeId: 'a', tier: 'ssd' },
          { nodeId: 'b', tier: 'ssd' },
        ],
      }),
      'b',
      'moved_queue',
    ],
    [
      'symphony: a short tail costs its recompute even when a partial is held: 12 + min(4, 5) = 16 < 20',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      homeOnA({ promptTokens: 4 * 256 + 64, partialHolders: [{ nodeId: 'a', tier: 'host' }] }),
      'b',
      'moved_queue',
    ],
    [
      'symphony: a dead home charges nobody the tail',
      'symphony',
      [node('a', { waiting: 1 }), node('b')],
      homeOnA({ sessionHome: 'gone' }),
      'b',
      'cheapest',
    ],
    [
      'symphony: tier-aware: host beats SSD',
      'symphony',
      [node('a'), node('b', { reservations: 1 })],
      req({ prefixes: [held('a', 'ssd', 'ssd', 'ssd', 'ssd'), held('b', 'host', 'host', 'host', 'host')] }),
      'b',
      'cheapest',
    ],
  ])('%s', (name, policy, nodes, request, expected, reason) => {
    const noPeer = name.includes('without peer fetch') || name.includes('queue long enough');
    const d = route(policy, nodes, request, noPeer ? { ...costs, peerMsPerChunk: Infinity } : costs);
    expect(d?.nodeId ?? null).toBe(expected);
    if (reason) expect(d?.reason).toBe(reason);
  });

  it.each<[string, RouteCandidate[], NodePrefix[], RoutingCosts, Array<[string, string[]]>]>([
    // A node restores from one peer, one unbroken run: a's k0–k2 from SSD save 3 × (16 − 9) = 21, c's host k0
    // only 16 − 5 = 11, so a serves all three although c's k0 alone is faster; k3 is nowhere.
    [
      'one peer: the run past the local prefix that saves the most',
      [node('a', { waiting: 2 }), node('b'), node('c', { waiting: 1 })],
      [held('a', 'ssd', 'ssd', 'ssd'), held('c', 'host')],
      costs,
      [['a', ['k0', 'k1', 'k2']]],
    ],
    // Two peers with the same run at the same price, listed c first: the smaller id serves, as on every replica.
    [
      'a tie between peers goes to the smaller id',
      [node('a', { waiting: 9 }), node('b'), node('c', { waiting: 9 })],
      [held('c', 'host', 'host'), held('a', 'host', 'host')],
      costs,
      [['a', ['k0', 'k1']]],
    ],
    // c's run is cut where fetching stops paying: its k1 on SSD over a slow pull (6 + 12 > 16).
    [
      'a run is cut where fetching stops paying',
      [node('a', { waiting: 9 }), node('b'), node('c', { waiting: 9 })],
      [held('c', 'host', 'ssd')],
      { ...costs, peerMsPerChunk: 12 },
      [['c', ['k0']]],
    ],
    [
      'no sources when peers cannot be reached',
      [node('a', { waiting: 2 }), node('b')],
      [held('a', 'device', 'device')],
      { ...costs, peerMsPerChunk: Infinity },
      [],
    ],
    ['no source slower than recomputing', [node('a', { waiting: 9 }), node('b')], [held('a', 'ssd')], { ...costs, peerMsPerChunk: 12 }, []],
  ])('symphony kv_sources: %s', (_n, nodes, prefixes, c, expected) => {
    const d = route('symphony', nodes, req({ prefixes }), c)!;
    expect(d.nodeId).toBe('b');
    expect(d.kvSources.map((s) => [s.nodeId, [...s.chunkKeys]])).toEqual(expected);
  });

  it('baselines pass no kv_sources (their nodes recompute what they lack)', () => {
    for (const p of ['recompute', 'sticky', 'prefix-affinity'] as const) {
      expect(route(p, [node('a'), node('b', { waiting: 5 })], req({ prefixes: [held('b', 'host', 'host')] }), costs)!.kvSources).toEqual(
        [],
      );
    }
  });

  /**
   * One system prompt (chunk 0) shared by every session, each with its own next chunk: every
   * routed request adds a queued request to its node and its chunks to the directory.
   */
  function sharedPromptRun(policy: RoutingPolicyName, c: RoutingCosts, requests = 60, nodes = 4): Map<string, number> {
    const dir = new KvDirectory(10_000);
    const load = new Map<string, number>(Array.from({ length: nodes }, (_, i) => [`n${i}`, 0]));
    for (let r = 0; r < requests; r++) {
      const keys = ['system', `user-${r}`];
      const cands = [...load].map(([id, queued]) => node(id, { waiting: queued }));
      const d = route(policy, cands, req({ chunkKeys: keys, prefixes: dir.prefixes(keys) }), c)!;
      load.set(d.nodeId, load.get(d.nodeId)! + 1);
      dir.apply(d.nodeId, [{ kind: 'stored', tier: 'device', keys }]);
    }
    return load;
  }
  const spread = (load: Map<string, number>) => Math.max(...load.values()) - Math.min(...load.values());

  it.each<[string, RoutingCosts]>([
    ['with peer fetch', DEFAULT_ROUTING_COSTS],
    ['without peer fetch', { ...DEFAULT_ROUTING_COSTS, peerMsPerChunk: Infinity }],
  ])('one system prompt shared by everyone does not send all traffic to one node (symphony, %s)', (_n, c) => {
    const load = sharedPromptRun('symphony', c);
    expect(spread(load)).toBeLessThanOrEqual(1);
  });

  it('…which is exactly what prefix-affinity does (the baseline’s known failure)', () => {
    const load = sharedPromptRun('prefix-affinity', DEFAULT_ROUTING_COSTS);
    expect(Math.max(...load.values())).toBe(60);
  });
});
