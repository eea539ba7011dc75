import { candidate } from '../testing/route.candidates.js';
import type { DirectoryTier, NodePrefix } from '../directory/kv-directory.types.js';
import { conductorEstimates, pickConductor, type ConductorOptions } from './conductor.policy.js';
import { route } from './route.policies.js';
import type { RouteCandidate, RouteRequest, RoutingCosts } from './route.types.js';

const node = (nodeId: string, backlogMs = 0): RouteCandidate => candidate(nodeId, { backlogMs });
const held = (nodeId: string, n: number, tier: DirectoryTier = 'host'): NodePrefix => ({
  nodeId,
  prefixChunks: n,
  tiers: Array.from({ length: n }, () => tier),
});
const KEYS = Array.from({ length: 10 }, (_, i) => `k${i}`);
const req = (prefixes: NodePrefix[], promptTokens = 10 * 256): RouteRequest => ({ model: 'm', chunkKeys: KEYS, prefixes, promptTokens });
/**
 * Round numbers so each row is checked by hand: queue = backlog (queueMsPerRequest 10, so one
 * queued-request unit is 10 ms of backlog); recompute 10 ms a chunk; host read 1; peer 2.
 */
const costs: RoutingCosts = {
  queueMsPerRequest: 10,
  reservationWeight: 0.5,
  recomputeMsPerChunk: 10,
  loadMsPerChunk: { device: 0, host: 1, ssd: 4 },
  peerMsPerChunk: 2,
  moveMarginMs: 0,
};

type Row = {
  name: string;
  nodes: RouteCandidate[];
  prefixes: NodePrefix[];
  o: ConductorOptions;
  c?: RoutingCosts;
  pick: string;
  from: string | null;
  ttft: number;
  rejected?: boolean;
};

describe(pickConductor.name, () => {
  it.each<Row>([
    {
      name: 'no cache anywhere: the emptiest queue (10 chunks recomputed = 100)',
      nodes: [node('a', 50), node('b', 20)],
      prefixes: [],
      o: { threshold: 2 },
      pick: 'b',
      from: null,
      ttft: 20 + 100,
    },
    {
      name: 'local prefix on an idle holder: 8 host reads + 2 recomputed = 28',
      nodes: [node('a'), node('b')],
      prefixes: [held('a', 8)],
      o: { threshold: 2 },
      pick: 'a',
      from: null,
      ttft: 8 + 20,
    },
    {
      name: 'holder busy (200): b fetches 8 chunks (8 × (1 + 2) = 24) and recomputes 2 (20)',
      nodes: [node('a', 200), node('b')],
      prefixes: [held('a', 8)],
      o: { threshold: 2 },
      pick: 'b',
      from: 'a',
      ttft: 24 + 20,
    },
    {
      name: 'threshold Infinity (local cache-aware): b may not fetch, recomputes all 10 (100) < a 200 + 28',
      nodes: [node('a', 200), node('b')],
      prefixes: [held('a', 8)],
      o: { threshold: Infinity },
      pick: 'b',
      from: null,
      ttft: 100,
    },
    {
      name: 'ratio 8/5 = 1.6 under threshold 2: b keeps its 5 (5 reads + 50 recompute) and queue 10',
      nodes: [node('a', 200), node('b', 10)],
      prefixes: [held('a', 8), held('b', 5)],
      o: { threshold: 2 },
      pick: 'b',
      from: null,
      ttft: 10 + 5 + 50,
    },
    {
      name: 'ratio 1.6 over threshold 1.5: b reads 5, fetches 3 (9), recomputes 2 (20)',
      nodes: [node('a', 200), node('b', 10)],
      prefixes: [held('a', 8), held('b', 5)],
      o: { threshold: 1.5 },
      pick: 'b',
      from: 'a',
      ttft: 10 + 5 + 9 + 20,
    },
    {
      name: 'no peer fetch (Infinity network): nothing moves whatever the threshold',
      nodes: [node('a', 200), node('b')],
      prefixes: [held('a', 8)],
      o: { threshold: 0 },
      c: { ...costs, peerMsPerChunk: Infinity },
      pick: 'b',
      from: null,
      ttft: 100,
    },
    {
      name: 'an SLO below the best estimate rejects (still names the best)',
      nodes: [node('a', 200), node('b')],
      prefixes: [held('a', 8)],
      o: { threshold: 2, ttftSloMs: 40 },
      pick: 'b',
      from: 'a',
      ttft: 44,
      rejected: true,
    },
    {
      name: 'equal estimates: the smaller node id',
      nodes: [node('b'), node('a')],
      prefixes: [],
      o: { threshold: 2 },
      pick: 'a',
      from: null,
      ttft: 100,
    },
  ])('$name', ({ nodes, prefixes, o, c, pick, from, ttft, rejected }) => {
    const choice = pickConductor(nodes, req(prefixes), c ?? costs, o)!;
    expect(choice.decision.nodeId).toBe(pick);
    expect(choice.estimate.from).toBe(from);
    expect(choice.estimate.ttftMs).toBeCloseTo(ttft, 9);
    expect(choice.rejected).toBe(rejected ?? false);
    const fetched = choice.decision.kvSources.flatMap((s) => s.chunkKeys);
    // The run starts at the first chunk the device lacks: these tables' own prefixes are on host, so at 0.
    expect(fetched).toEqual(from ? KEYS.slice(0, choice.estimate.prefixChunks + choice.estimate.transferChunks) : []);
  });

  it('prices a partial tail past the last whole chunk as recompute', () => {
    const [e] = conductorEstimates([node('a')], req([], 10 * 256 + 128), costs, { threshold: 2 });
    expect(e!.prefillMs).toBeCloseTo(105, 9);
  });

  it('has no pick without candidates', () => {
    expect(pickConductor([], req([]), costs, { threshold: 2 })).toBeNull();
  });

  it('is the scheduler policy `conductor`, its threshold from the costs', () => {
    const nodes = [node('a', 200), node('b', 10)];
    const r = req([held('a', 8), held('b', 5)]);
    expect(route('conductor', nodes, r, { ...costs, conductorThreshold: 1.5 })!.kvSources).toEqual([
      { nodeId: 'a', chunkKeys: KEYS.slice(0, 8) },
    ]);
    expect(route('conductor', nodes, r, costs)!.kvSources).toEqual([]);
  });

  it.each([
    ['b holds its 5 chunks on its device: only the missing 3 come', 'device', KEYS.slice(5, 8)],
    ['b holds them on host: the run starts at chunk 0, or b, whose device lacks chunk 0, could not use it', 'host', KEYS.slice(0, 8)],
  ] as const)('transfers one run from the first chunk the device lacks: %s', (_name, tier, keys) => {
    const choice = pickConductor([node('a', 200), node('b', 10)], req([held('a', 8), held('b', 5, tier)]), costs, { threshold: 1.5 })!;
    expect(choice.decision.nodeId).toBe('b');
    expect(choice.decision.kvSources).toEqual([{ nodeId: 'a', chunkKeys: keys }]);
  });
});
