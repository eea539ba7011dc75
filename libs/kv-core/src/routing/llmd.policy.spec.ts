import type { NodePrefix } from '../directory/kv-directory.types.js';
import { candidate, heldIn } from '../testing/route.candidates.js';
import { LLMD_DEFAULT_WEIGHTS, llmdScores, pickLlmd } from './llmd.policy.js';
import { route } from './route.policies.js';
import { DEFAULT_ROUTING_COSTS, type RouteCandidate, type RoutingCosts } from './route.types.js';

const node = candidate;
const held = heldIn;
/** One queued request per 20 ms of backlog, so backlog rows can be checked by hand. */
const costs: RoutingCosts = { ...DEFAULT_ROUTING_COSTS, queueMsPerRequest: 20 };

describe(llmdScores.name, () => {
  it.each<[string, RouteCandidate[], number, NodePrefix[], Array<[number, number, number]>]>([
    [
      'prefix: fraction of the whole chunks a node leads with, any tier',
      [node('a'), node('b')],
      4,
      [held('a', 'device', 'host', 'ssd'), held('b', 'ssd')],
      [
        [0.75, 1, 1],
        [0.25, 1, 1],
      ],
    ],
    ['prefix: a request without a whole chunk scores 0 everywhere', [node('a')], 0, [held('a', 'device')], [[0, 1, 1]]],
    [
      'queue: min–max normalised, shortest 1 and longest 0',
      [node('a', { waiting: 0 }), node('b', { waiting: 2 }), node('c', { waiting: 4 })],
      1,
      [],
      [
        [0, 1, 1],
        [0, 0.5, 1],
        [0, 0, 1],
      ],
    ],
    [
      'queue: all equal → 1 for all',
      [node('a', { waiting: 3 }), node('b', { waiting: 3 })],
      1,
      [],
      [
        [0, 1, 1],
        [0, 1, 1],
      ],
    ],
    [
      'queue: running requests are not the queue; prefill backlog is (40 ms = 2 requests)',
      [node('a', { running: 9 }), node('b', { backlogMs: 40 })],
      1,
      [],
      [
        [0, 1, 1],
        [0, 0, 1],
      ],
    ],
    [
      'kv utilization: 1 − usage, clamped, unknown as full',
      [node('a', { kvUsage: 0.25 }), node('b', { kvUsage: 1.5 }), node('c', { kvUsage: NaN })],
      1,
      [],
      [
        [0, 1, 0.75],
        [0, 1, 0],
        [0, 1, 0],
      ],
    ],
  ])('%s', (_n, nodes, chunks, prefixes, want) => {
    const got = llmdScores(nodes, chunks, prefixes, costs).map((s) => [s.prefixCache, s.queue, s.kvUtilization]);
    expect(got).toEqual(want);
  });

  it('weighs 3 : 2 : 2 by default', () => {
    expect(LLMD_DEFAULT_WEIGHTS).toEqual({ prefixCache: 3, queue: 2, kvUtilization: 2 });
    const [s] = llmdScores([node('a', { kvUsage: 0.5 })], 2, [held('a', 'host')], costs);
    expect(s!.total).toBeCloseTo(3 * 0.5 + 2 * 1 + 2 * 0.5);
  });
});

describe(pickLlmd.name, () => {
  const KEYS = ['k0', 'k1', 'k2', 'k3'];
  it.each<[string, RouteCandidate[], NodePrefix[], string]>([
    // a: 3·1 + 2·0 + 2·1 = 5; b: 3·0.25 + 2·1 + 2·1 = 4.75 → a
    [
      'the holder of the whole history keeps it against one queued request elsewhere',
      [node('a', { waiting: 1 }), node('b')],
      [held('a', 'device', 'device', 'device', 'device'), held('b', 'device')],
      'a',
    ],
    // a: 3·0.5 + 0 + 2 = 3.5; b: 0 + 2 + 2 = 4 → b: half a prefix does not outweigh a queue
    ['half the prefix loses to the shorter queue', [node('a', { waiting: 1 }), node('b')], [held('a', 'device', 'device')], 'b'],
    // a: 3 + 0 + 2·0.1 = 3.2; b: 3·0.25 + 2 + 2 = 4.75 → b: a nearly full device counts
    [
      'a full device and a queue outweigh the whole prefix',
      [node('a', { waiting: 1, kvUsage: 0.9 }), node('b')],
      [held('a', 'device', 'device', 'device', 'device'), held('b', 'host')],
      'b',
    ],
    // equal queues: the queue scorer cannot tell them apart, so a shared prompt's holder wins on prefix
    ['equal queues: prefix decides however many are running', [node('a', { running: 12 }), node('b')], [held('a', 'device')], 'a'],
    ['a tie goes to the lower load, then the smaller id', [node('b'), node('a'), node('c', { running: 1 })], [], 'a'],
  ])('%s', (_n, nodes, prefixes, want) => {
    expect(pickLlmd(nodes, KEYS.length, prefixes, costs)?.nodeId).toBe(want);
  });

  it('no candidate → null', () => expect(pickLlmd([], 1, [], costs)).toBeNull());

  it('route("llmd") sends the request to the highest score with reason scored and no kv_sources', () => {
    const d = route(
      'llmd',
      [node('a', { waiting: 1 }), node('b'), node('x', { models: ['other'] })],
      { model: 'm', chunkKeys: KEYS, prefixes: [held('a', 'device', 'device'), held('x', 'device', 'device', 'device', 'device')] },
      costs,
    );
    expect(d).toEqual({ nodeId: 'b', reason: 'scored', kvSources: [], estimateMs: 0 });
  });
});
