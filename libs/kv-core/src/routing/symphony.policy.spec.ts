import { candidate, heldIn, ROUND_COSTS } from '../testing/route.candidates.js';
import { costsOf } from './node.costs.js';
import type { MeasuredCosts } from './node-load.js';
import { queueAheadMs } from './route.load.js';
import { symphony } from './symphony.policy.js';
import type { RouteCandidate, RouteRequest, RoutingCosts } from './route.types.js';

const node = candidate;
const held = heldIn;
const KEYS = ['k0', 'k1', 'k2', 'k3'];
const req = (over: Partial<RouteRequest> = {}): RouteRequest => ({ model: 'm', chunkKeys: KEYS, prefixes: [], ...over });
const costs = ROUND_COSTS;

describe(costsOf.name, () => {
  it.each<[string, MeasuredCosts | undefined, Partial<RoutingCosts>]>([
    ['nothing measured: the configured figures', undefined, {}],
    ['a measured prefill replaces the configured one', { recomputeMsPerChunk: 30 }, { recomputeMsPerChunk: 30 }],
    ['tiers one by one', { loadMsPerChunk: { ssd: 9 } }, { loadMsPerChunk: { device: 0, host: 2, ssd: 9 } }],
    ['a negative or non-finite figure is ignored', { recomputeMsPerChunk: -1, peerMsPerChunk: NaN }, {}],
    ['a measured pull', { peerMsPerChunk: 7 }, { peerMsPerChunk: 7 }],
  ])('%s', (_name, measured, changed) => {
    expect(costsOf(measured, costs)).toEqual({ ...costs, ...changed });
  });

  it('keeps peer fetch off where the scheduler turned it off', () => {
    expect(costsOf({ peerMsPerChunk: 1 }, { ...costs, peerMsPerChunk: Infinity }).peerMsPerChunk).toBe(Infinity);
  });
});

describe(symphony.name, () => {
  it.each<[string, RouteCandidate[], RouteRequest, string, string]>([
    [
      'the home lost the KV, a third node holds it on host: home and b would pull alike (4 × (2 + 3) = 20), so it stays',
      [node('a'), node('b')],
      req({ prefixes: [held('c', 'host', 'host', 'host', 'host')], sessionHome: 'a' }),
      'a',
      'session_home',
    ],
    [
      'the home lost the KV and b holds it on its device: moved for the KV, not the queue',
      [node('a'), node('b')],
      req({ prefixes: [held('b', 'device', 'device', 'device', 'device')], sessionHome: 'a' }),
      'b',
      'moved_kv',
    ],
    [
      'b measured a slow prefill (40 per chunk): recomputing there costs 160, so a busier a (60 + 64) wins',
      [node('a', { waiting: 3 }), node('b', { costs: { recomputeMsPerChunk: 40 } })],
      req(),
      'a',
      'cheapest',
    ],
    ['the same without b’s measurement: b is cheaper (64 < 124)', [node('a', { waiting: 3 }), node('b')], req(), 'b', 'cheapest'],
    [
      'b measured a slow pull (30 per chunk): fetching a’s host copy (4 × 32) loses to a queue of two there (40 + 8)',
      [node('a', { waiting: 2 }), node('b', { costs: { peerMsPerChunk: 30 } })],
      req({ prefixes: [held('a', 'host', 'host', 'host', 'host')] }),
      'a',
      'cheapest',
    ],
  ])('%s', (_name, nodes, request, expected, reason) => {
    const d = symphony(nodes, request, costs);
    expect([d.nodeId, d.reason]).toEqual([expected, reason]);
  });

  it.each<[string, Partial<RouteCandidate>, number]>([
    ['decoding sequences are not ahead of a new request (continuous batching admits it between steps)', { running: 6 }, 0],
    ['queued requests are, at queueMsPerRequest each', { running: 6, waiting: 2 }, 40],
    ['reservations at their weight, and the prefill backlog the scheduler sent', { reservations: 2, backlogMs: 7 }, 20 + 7],
    ['KV pressure counts as requests (a full device must preempt to admit)', { kvUsage: 0.5 }, 2 * 20],
    ['a full batch: the wait for a slot', { running: 4, maxBatch: 4, costs: { slotMs: 9 } }, 9],
  ])('queue ahead: %s', (_name, load, queueMs) => {
    expect(queueAheadMs(node('a', load), costs)).toBe(queueMs);
  });

  it('a home with more decoding sessions keeps its session: no move for a wait that is not there', () => {
    const d = symphony(
      [node('a', { running: 8 }), node('b', { running: 1 })],
      req({ prefixes: [held('a', 'device', 'device', 'device', 'device')], sessionHome: 'a' }),
      costs,
    );
    expect([d.nodeId, d.reason]).toEqual(['a', 'session_home']);
  });

  it.each([
    ['a holds k0, k1 on its device: b sends the two it lacks (2 × 3)', held('a', 'device', 'device'), ['k2', 'k3'], 6],
    [
      'a holds k0, k1 on host: a restore past its device is its tiers or one peer run, so b sends all four (4 × 3 < 2 × 2 + 2 × 16)',
      held('a', 'host', 'host'),
      KEYS,
      12,
    ],
    ['a holds k0 on device, k1 on host: the run starts at k1 (3 × 3)', held('a', 'device', 'host'), ['k1', 'k2', 'k3'], 9],
  ])('a peer run starts at the first chunk the device lacks: %s', (_name, own, keys, kvMs) => {
    const d = symphony(
      [node('a'), node('b', { waiting: 9 })],
      req({ prefixes: [own, held('b', 'device', 'device', 'device', 'device')] }),
      costs,
    );
    expect(d.nodeId).toBe('a');
    expect(d.kvSources).toEqual([{ nodeId: 'b', chunkKeys: keys }]);
    expect(d.candidates![0]!.kvMs).toBe(kvMs);
  });

  it('gives every candidate’s estimate, queue and KV apart, in candidate order', () => {
    const d = symphony([node('a', { waiting: 1 }), node('b')], req({ prefixes: [held('a', 'device', 'device', 'host', 'ssd')] }), costs);
    expect(d.candidates).toEqual([
      { nodeId: 'a', queueMs: 20, kvMs: 8, totalMs: 28 },
      // b: k0, k1 from a's device (0 + 3), k2 from its host (2 + 3), k3 from its SSD (6 + 3)
      { nodeId: 'b', queueMs: 0, kvMs: 3 + 3 + 5 + 9, totalMs: 20 },
    ]);
    expect(d.estimateMs).toBe(20);
  });
});
